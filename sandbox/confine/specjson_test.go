package confine

import (
	"encoding/json"
	"reflect"
	"testing"
)

// specSeeds are specs as Encode writes them, and near misses.
var specSeeds = []string{
	`{"root":"/w","writable":["/w","/tmp"],"read_only":["/w/.git/hooks","/w/warden.yaml"],"hidden":["/home/u/.ssh"],"placeholders":["/w/.codex"],"network_deny":true,"ports":[5432,0,65535],"required":true,"unset_env":["SSH_AUTH_SOCK"],"policy_file":"/w/warden.yaml","policy_sha256":"ab12"}`,
	`{"root":"/w","writable":["/w"],"read_only":null,"hidden":null,"network_deny":false,"required":false}`,
	`{"root":"/w","writable":[],"read_only":[],"hidden":[],"ports":[],"test_disable":"userns"}`,
	` { "root" : "/w é" , "writable" : [ "/w" ] } `,
	`{}`,
	`{"root":"/w\"x","writable":["/w"]}`,
	`{"root":"/w\u003cx","writable":["/w"]}`,
	`{"Root":"/w","writable":["/w"]}`,
	`{"root":"/w","writable":["/w"],"extra":1}`,
	`{"root":"/w","writable":["/w"],"ports":[01]}`,
	`{"root":"/w","writable":["/w"],"ports":[1e3]}`,
	`{"root":"/w","writable":["/w"],"ports":[-1]}`,
	`{"root":"/w","root":"/v","writable":["/w"],"writable":["/v"]}`,
	`{"root":null,"writable":["/w"]}`,
	`{"root":"/w","writable":["/w"]} x`,
	`{"root":"/w","writable":["/w"],}`,
	`{"root":"/w","required":truex}`,
	"{\"root\":\"/w\xff\",\"writable\":[\"/w\"]}",
	"{\"root\":\"/w\x01\",\"writable\":[\"/w\"]}",
}

// FuzzDecodeSpec: whatever decodeSpecFast decodes, encoding/json decodes
// too, to the same Spec; and decodeSpec's result and error are
// encoding/json's for every input.
func FuzzDecodeSpec(f *testing.F) {
	for _, s := range specSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want Spec
		wantErr := json.Unmarshal(data, &want)
		if got, ok := decodeSpecFast(data); ok {
			if wantErr != nil {
				t.Fatalf("the fast decoder took %q, which encoding/json refuses: %v", data, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: the fast decoder gave %+v, encoding/json %+v", data, got, want)
			}
		}
		var got Spec
		err := decodeSpec(data, &got)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: decodeSpec's error %v, encoding/json's %v", data, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decodeSpec gave %+v, encoding/json %+v", data, got, want)
		}
	})
}

// TestDecodeSpecFastTakesEncode: every spec Encode writes is read by the
// fast decoder (the runner's path), with its paths as they were.
func TestDecodeSpecFastTakesEncode(t *testing.T) {
	specs := []Spec{
		{Root: "/w", Writable: []string{"/w", "/tmp"}},
		{Root: "/home/ü/proj", Writable: []string{"/home/ü/proj", "/tmp", "/var/tmp/x y"}, ReadOnly: []string{"/home/ü/proj/.git/hooks"},
			Hidden: []string{"/home/ü/.ssh", "/home/ü/proj/.env"}, Placeholders: []string{"/home/ü/proj/.codex"}, NetworkDeny: true,
			Ports: []int{5432, 6379}, Required: true, UnsetEnv: []string{"SSH_AUTH_SOCK"}, PolicyFile: "/home/ü/proj/warden.yaml", PolicyDigest: "00ff"},
	}
	for _, s := range specs {
		data, _, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, ok := decodeSpecFast(data)
		if !ok {
			t.Fatalf("the fast decoder refused %s", data)
		}
		var want Spec
		if err := json.Unmarshal(data, &want); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: fast %+v, encoding/json %+v (%v)", data, got, want, err)
		}
	}
}
