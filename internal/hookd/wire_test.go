package hookd

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The client's hand-written codec must say exactly what encoding/json
// says: hookd reads requests and writes answers with encoding/json.

var wireStrings = []string{"", "claude", `a"b\c`, "line\nnext\r\ttab", "\x00\x01\x1f\x7f", "é 日本 🙂",
	"bad \xff utf-8 \xc3", "\u2028\u2029", "</script>&", `C:\path\to`}

func TestEncodeRequestIsJSON(t *testing.T) {
	for _, s := range wireStrings {
		for _, req := range []Request{
			{V: Version, Op: OpHook, Args: []string{"claude", s, "--timeout", "3s"}, Dir: "/p/" + s, Home: s,
				Stdin: []byte(`{"tool_input":` + s + "\x00\xff}"), Interactive: true, CallID: "c-" + s},
			{V: Version, Op: OpPing},
			{V: -3, Op: s, Stdin: []byte{}},
		} {
			got := encodeRequest(&req)
			var back Request
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("%q: encoding/json cannot read %s: %v", s, got, err)
			}
			var want Request
			std, _ := json.Marshal(req)
			if err := json.Unmarshal(std, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, want) {
				t.Errorf("%q: encodeRequest gives %+v, encoding/json %+v", s, back, want)
			}
		}
	}
}

func TestDecodeResponseReadsJSON(t *testing.T) {
	for _, s := range wireStrings {
		for _, resp := range []Response{
			{V: Version, Code: 2, Stdout: []byte(`{"decision":"deny"}` + s), Stderr: []byte(s), Refused: s, PID: 4242},
			{V: Version},
			{V: Version, Code: -1, Stdout: []byte{}},
		} {
			data, err := json.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range [][]byte{data, []byte(" \n" + string(data) + "\n")} {
				got, err := decodeResponse(in)
				if err != nil {
					t.Fatalf("%s: %v", in, err)
				}
				var want Response
				json.Unmarshal(data, &want)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: decodeResponse gives %+v, encoding/json %+v", in, got, want)
				}
			}
		}
	}
	// Escapes encoding/json writes in other forms, and pairs.
	got, err := decodeResponse([]byte(`{"v":1,"refused":"\u00e9\ud83d\ude42\/\b\f\"\\ \ud800x","extra":"x","n":12}`))
	if err != nil || got.Refused != "é🙂/\b\f\"\\ \ufffdx" || got.V != 1 {
		t.Errorf("escapes: %q %v", got.Refused, err)
	}
}

// A broken or foreign answer is an error, never a zero Response (which
// would read as exit code 0 with nothing to print).
func TestDecodeResponseRefusesBrokenAnswers(t *testing.T) {
	for _, in := range []string{"", "null", "[]", `{"v":1`, `{"v":1,}`, `{"v":"1"}`, `{"code":1.5}`, `{"code":true}`,
		`{"stdout":"not base64!"}`, `{"stdout":12}`, `{"refused":"a` + "\n" + `"}`, `{"v":1} x`, `{"v":1}{}`,
		`{"refused":"\x"}`, `{"refused":"\u12"}`, `{"k":{"a":1}}`, `{"k":[1]}`, `{v:1}`} {
		if got, err := decodeResponse([]byte(in)); err == nil {
			t.Errorf("%q: read as %+v", in, got)
		}
	}
}

func FuzzDecodeResponse(f *testing.F) {
	f.Add([]byte(`{"v":1,"code":2,"stdout":"e30=","refused":"x\u00e9"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeResponse(data)
		if err != nil {
			return
		}
		// What it reads, encoding/json reads the same way.
		var want Response
		if jerr := json.Unmarshal(data, &want); jerr != nil {
			if strings.Contains(jerr.Error(), "invalid character") || strings.Contains(jerr.Error(), "unexpected end") {
				t.Fatalf("%q: read as %+v, encoding/json says %v", data, got, jerr)
			}
			return
		}
		if got.V != want.V || got.Code != want.Code || got.PID != want.PID || string(got.Stdout) != string(want.Stdout) ||
			string(got.Stderr) != string(want.Stderr) {
			t.Fatalf("%q: read as %+v, encoding/json %+v", data, got, want)
		}
	})
}
