package policy

import (
	"encoding/json"
	"fmt"
)

// jsonMarshal marshals a value decoded from YAML, whose maps may have
// non-string keys, as JSON.
func jsonMarshal(v any) ([]byte, error) {
	return json.Marshal(jsonable(v))
}

func jsonable(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = jsonable(x)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[fmt.Sprint(k)] = jsonable(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = jsonable(x)
		}
		return out
	}
	return v
}
