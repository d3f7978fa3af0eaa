package mcpproxy

import "context"

type callIDKey struct{}

// CallID is the id the proxy gave the tools/call being decided under ctx
// ("" for none): a Gate records the call under it, so that a request the
// client sends again with the same JSON-RPC id (a retry: MCP forbids a
// client to use an id twice in a session) gets the decision on record and
// is not decided twice. It is the proxy run's own prefix and the request's
// id, so that another run's requests, which number from 0 again, never
// meet it.
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}

// withCallID is ctx carrying the call id of a request.
func withCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}
