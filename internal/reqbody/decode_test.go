package reqbody

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/wire"
)

// slowDecide decodes a /v1/decide body the way every other body is
// decoded (Decide): the request, its call, and ok.
func slowDecide(data []byte) (wire.DecideRequest, warden.ToolCall, bool) {
	req, call, err := Decide(data)
	return req, call, err == nil
}

// decideBodies: the first taken are decoded in one pass, the rest not.
const taken = 7

var decideBodies = []string{
	`{"call":{"tool":"Bash","args":{"command":"git status"},"session":"s-1"},"host_prompts":true}`,
	`{"call":{"tool":"Bash","args":{"command":"rm -rf x","n":1.5,"list":[1,"a",null,{"k":true}]},"session":"s","role":"builder","depth":2,"intent":"fix","intent_id":"i-1","cwd":"/w","host":"claude"},"wait":"30s","call_id":"c-1"}`,
	`{"call":{"tool":"Read","args":{}}}`,
	` {"wait":"1s", "call" : {"args":{"a":"\u00e9\ud83d\ude00"},"tool":"T"}} `,
	`{"call":{"tool":"Bash","args":{},"depth":null}}`,
	`{"call":{"tool":"Bash","args":{}},"wait":null,"call_id":null,"host_prompts":null}`,
	`{"call":{"tool":"Bash","args":{"x":{"tool":1,"tool":2,"Tool":3}}}}`,
	// Refused, or not taken by the one pass: each must fall back and end
	// as the slow way ends.
	`{"call":{"to\u006fl":"Bash","args":{}}}`,
	`{"call":{"tool":"Bash","args":{}},"CALL":{"tool":"Read","args":{}}}`,
	`{"CALL":{"tool":"Bash","args":{}}}`,
	`{"call":{"Tool":"Bash","args":{}}}`,
	`{"call":{"tool":"Bash","TOOL":"Read","args":{}}}`,
	`{"call":{"tool":"Bash","tool":"Read","args":{}}}`,
	`{"call":{"tool":"Bash","args":{"a":1},"args":{"b":2}}}`,
	`{"call":{"tool":"Bash","args":{}},"call":{"tool":"Read","args":{}}}`,
	`{"call":{"tool":"Bash","args":null}}`,
	`{"call":{"tool":"Bash"}}`,
	`{"call":{"tool":"","args":{}}}`,
	`{"call":{"tool":null,"args":{}}}`,
	`{"call":{"tool":"Bash","args":[]}}`,
	`{"call":{"tool":"Bash","args":{},"depth":-1}}`,
	`{"call":{"tool":"Bash","args":{},"depth":1.5}}`,
	`{"call":{"tool":"Bash","args":{},"extra":1}}`,
	`{"call":null}`,
	`{"call":"Bash"}`,
	`{"wait":"1s"}`,
	`{"call":{"tool":"Bash","args":{}}} {}`,
	`{"call":{"tool":"Bash","args":{}}}x`,
	`{"call":{"tool":"Bash","args":{}},"host_prompts":"yes"}`,
	`{"call":{"tool":"Bash","args":{"s":"\xff"}}}`,
	`[]`, `null`, ``, `{`, `{"call":{"tool":"Bash","args":{}}`,
}

// TestDecodeDecideIsTheSlowWay: every body the one pass takes, it
// decodes as readJSON and readCall do, and it takes the everyday ones.
func TestDecodeDecideIsTheSlowWay(t *testing.T) {
	for i, body := range decideBodies {
		checkDecodeDecide(t, []byte(body))
		if _, _, ok := DecodeDecide([]byte(body)); ok != (i < taken) {
			t.Errorf("DecodeDecide(%s): took it %v, want %v", body, ok, i < taken)
		}
	}
}

func FuzzDecodeDecide(f *testing.F) {
	for _, b := range decideBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDecodeDecide(t, data) })
}

// checkDecodeDecide fails when the one pass takes a body and decodes it
// otherwise than the slow way, or takes one the slow way refuses.
func checkDecodeDecide(t *testing.T, data []byte) {
	t.Helper()
	req, call, ok := DecodeDecide(data)
	if !ok {
		return
	}
	sreq, scall, sok := slowDecide(data)
	if !sok {
		t.Fatalf("decodeDecide took %q, which the slow way refuses", data)
	}
	sreq.Call = nil
	if !reflect.DeepEqual(req, sreq) || !reflect.DeepEqual(call, scall) {
		t.Fatalf("DecodeDecide(%q) = %+v, %+v; the slow way %+v, %+v", data, req, call, sreq, scall)
	}
	// The call is the one its own JSON says: encoded and decoded again,
	// the same.
	again, err := json.Marshal(call)
	if err != nil {
		t.Fatal(err)
	}
	back, err := warden.ParseToolCall(again)
	if err != nil || !reflect.DeepEqual(back, call) {
		t.Fatalf("DecodeDecide(%q): %+v does not survive its own JSON (%s): %v", data, call, again, err)
	}
}

func BenchmarkDecodeDecide(b *testing.B) {
	body := []byte(`{"call":{"tool":"Bash","args":{"command":"git status && echo done"},"session":"bench-3"},"host_prompts":true}`)
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, ok := DecodeDecide(body); !ok {
				b.Fatal("not taken")
			}
		}
	})
	b.Run("slow", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, ok := slowDecide(body); !ok {
				b.Fatal("refused")
			}
		}
	})
}
