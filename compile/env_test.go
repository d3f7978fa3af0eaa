package compile_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden/compile"
)

// TestNewModel: a model needs both its address and its name; its key
// comes from warden's variable before OpenAI's, or from the variable
// named, which must then be set; a key is never in an error.
func TestNewModel(t *testing.T) {
	t.Setenv("WARDEN_LLM_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "sk-openai")
	t.Setenv("MY_KEY", "")
	if m, err := compile.NewModel("", "", "", time.Minute); m != nil || err != nil {
		t.Errorf("no address and no name: %+v %v, want no model", m, err)
	}
	for _, c := range [][2]string{{"http://127.0.0.1:1/v1", ""}, {"", "m"}} {
		if m, err := compile.NewModel(c[0], c[1], "", time.Minute); m != nil || err == nil || !strings.Contains(err.Error(), "both") {
			t.Errorf("%q %q: %+v %v, want an error asking for both", c[0], c[1], m, err)
		}
	}
	m, err := compile.NewModel("http://127.0.0.1:1/v1", "m", "", time.Minute)
	if err != nil || m.APIKey != "sk-openai" || m.Name != "m" || m.Timeout != time.Minute {
		t.Errorf("OpenAI's key: %+v %v", m, err)
	}
	t.Setenv("WARDEN_LLM_API_KEY", "sk-warden")
	if m, err := compile.NewModel("http://127.0.0.1:1/v1", "m", "", time.Minute); err != nil || m.APIKey != "sk-warden" {
		t.Errorf("warden's key first: %+v %v", m, err)
	}
	if m, err := compile.NewModel("http://127.0.0.1:1/v1", "m", "MY_KEY", time.Minute); m != nil || err == nil || !strings.Contains(err.Error(), "MY_KEY") {
		t.Errorf("--api-key-env naming an empty variable: %+v %v", m, err)
	}
	t.Setenv("MY_KEY", "sk-mine")
	if m, err := compile.NewModel("http://127.0.0.1:1/v1", "m", "MY_KEY", time.Minute); err != nil || m.APIKey != "sk-mine" {
		t.Errorf("--api-key-env: %+v %v", m, err)
	}
}
