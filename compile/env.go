package compile

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// The environment variables a model's settings are read from, first one
// set first: warden's own, then the ones OpenAI's tools read.
var (
	BaseURLEnv = []string{"WARDEN_LLM_BASE_URL", "OPENAI_BASE_URL"}
	ModelEnv   = []string{"WARDEN_LLM_MODEL", "OPENAI_MODEL"}
	APIKeyEnv  = []string{"WARDEN_LLM_API_KEY", "OPENAI_API_KEY"}
)

// Getenv returns the first environment variable of names that is set and
// not empty, or "".
func Getenv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// NewModel is the model at baseURL named name, with its API key read from
// the environment variable keyEnv (default: APIKeyEnv), so that the key is
// never a command-line argument. It returns nil, and no error, when both
// baseURL and name are empty (Compile then asks no model); an error when
// only one is given, or keyEnv names a variable that is empty or not set.
func NewModel(baseURL, name, keyEnv string, timeout time.Duration) (*Model, error) {
	if baseURL == "" && name == "" {
		return nil, nil
	}
	if baseURL == "" || name == "" {
		return nil, errors.New("set both --base-url and --model (or WARDEN_LLM_BASE_URL and WARDEN_LLM_MODEL)")
	}
	key := Getenv(APIKeyEnv...)
	if keyEnv != "" {
		if key = os.Getenv(keyEnv); key == "" {
			return nil, fmt.Errorf("--api-key-env %s: the variable is empty or not set", keyEnv)
		}
	}
	return &Model{BaseURL: baseURL, Name: name, APIKey: key, Timeout: timeout}, nil
}
