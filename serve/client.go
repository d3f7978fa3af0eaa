package serve

import (
	"github.com/warden-run/warden/remote"
	"github.com/warden-run/warden/wire"
)

// Client calls a `warden serve` with an agent token.
//
// Deprecated: use remote.Client; the client of the service is package
// remote, apart from the service.
type Client = remote.Client

// MCPGate is the gate of `warden mcp proxy --serve URL`.
//
// Deprecated: use remote.MCPGate.
type MCPGate = remote.MCPGate

// HiddenRequest is the body of POST /v1/hidden (wire.HiddenRequest).
type HiddenRequest = wire.HiddenRequest

// HiddenResponse is the answer of POST /v1/hidden (wire.HiddenResponse).
type HiddenResponse = wire.HiddenResponse
