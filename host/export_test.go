package host

import (
	"testing"

	"github.com/warden-run/warden/host/kit"
)

// AddForTest puts h at the end of All until the test ends.
func AddForTest(t *testing.T, h kit.Host) {
	extra = append(extra, h)
	t.Cleanup(func() { extra = nil })
}
