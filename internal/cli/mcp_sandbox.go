package cli

import "github.com/warden-run/warden/sandbox/confine"

// sandboxExe is the confining program warden starts its confined
// children through (the MCP server, doctor's live proof): the small helper
// next to warden when installed, else warden itself ("": /proc/self/exe).
// A variable for tests, whose own binary is not warden.
var sandboxExe = confine.Helper
