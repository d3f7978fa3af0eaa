// Package reqbody decodes the bodies of warden serve's API: each strictly
// (one JSON value, no name its type has no field for), and a /v1/decide
// body in one pass where it can (DecodeDecide). It imports only the tool
// call's and the wire's types, so that its fuzz test builds without the
// service.
package reqbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/wire"
)

// Strict decodes data, one JSON value, into v; a name v has no field for
// is an error, as is anything after the value.
func Strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("request body is not the JSON expected: %w", err)
	}
	if dec.More() {
		return errors.New("request body is not the JSON expected: more than one JSON value")
	}
	return nil
}

// Call decodes the "call" of a request body as warden.ParseToolCall does;
// a body without one is an error.
func Call(raw json.RawMessage) (warden.ToolCall, error) {
	if len(raw) == 0 {
		return warden.ToolCall{}, errors.New(`request body is not the JSON expected: no "call"`)
	}
	return warden.ParseToolCall(raw)
}

// Decide decodes a /v1/decide body the way every other body is decoded
// (Strict, then Call): the way that takes or refuses any body in its own
// words, which DecodeDecide's one pass must agree with.
func Decide(data []byte) (wire.DecideRequest, warden.ToolCall, error) {
	var req wire.DecideRequest
	if err := Strict(data, &req); err != nil {
		return req, warden.ToolCall{}, err
	}
	call, err := Call(req.Call)
	return req, call, err
}
