package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/client"
	"github.com/warden-run/warden/serve"
)

// TestDecideFollowsHaltsElsewhere: the service keeps the halts and
// grants its decisions read (sqlstore.CachedReads), and another process
// on the same store halts the project, grants and revokes: every call
// sent after the halt returned is denied HALTED, from many clients at
// once, and every call after the resume and the revoke is decided on
// them, not on what the service kept.
func TestDecideFollowsHaltsElsewhere(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			sv := startBenchServe(t, store, 0)
			pf, tok := sv.policy, sv.token
			// The other process: a store of its own on the same database.
			other, err := client.OpenStore(context.Background(), pf, sv.store)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()

			u := sv.url
			decide := func(session, command string) serve.DecideResponse {
				body := fmt.Appendf(nil, `{"call":{"tool":"Bash","args":{"command":%q},"session":%q},"host_prompts":true}`, command, session)
				req, _ := http.NewRequest("POST", u, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+tok)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return serve.DecideResponse{}
				}
				defer resp.Body.Close()
				var out serve.DecideResponse
				if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
					t.Errorf("%d %v", resp.StatusCode, err)
				}
				return out
			}
			all := func(command string, check func(serve.DecideResponse) error) {
				var wg sync.WaitGroup
				for c := range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range 3 {
							if err := check(decide(fmt.Sprintf("s%d", c), command)); err != nil {
								t.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
			}
			code := func(want warden.Code) func(serve.DecideResponse) error {
				return func(r serve.DecideResponse) error {
					if r.Decision.Code != want || r.Error != "" || r.AuditID == 0 {
						return fmt.Errorf("decision %s %s (error %q, audit %d), want %s", r.Decision.Decision, r.Decision.Code, r.Error, r.AuditID, want)
					}
					return nil
				}
			}
			decision := func(want warden.Effect) func(serve.DecideResponse) error {
				return func(r serve.DecideResponse) error {
					if r.Decision.Decision != want || r.Error != "" || r.AuditID == 0 {
						return fmt.Errorf("decision %s %s (error %q), want %s", r.Decision.Decision, r.Decision.Code, r.Error, want)
					}
					return nil
				}
			}
			all("git status", decision(warden.Allow)) // the answers kept
			if _, err := other.SetHalt(context.Background(), warden.Halt{Message: "incident", By: "test"}); err != nil {
				t.Fatal(err)
			}
			all("git status", code(warden.CodeHalted))
			if err := other.ClearHalt(context.Background(), ""); err != nil {
				t.Fatal(err)
			}
			all("git status", decision(warden.Allow))
			// A grant for s0 elsewhere lets its push through; revoked, it
			// asks again.
			all("git push origin main", decision(warden.Ask))
			g, err := other.AddGrant(context.Background(), warden.Grant{Tool: "Bash", Session: "s0", Subject: "command", Value: "git push origin main", UsesLeft: -1})
			if err != nil {
				t.Fatal(err)
			}
			if r := decide("s0", "git push origin main"); r.Decision.Decision != warden.Allow {
				t.Fatalf("the push with a grant added elsewhere: %s %s %s", r.Decision.Decision, r.Decision.Code, r.Error)
			}
			decide("s1", "git status") // another session keeps its answer
			if err := other.RevokeGrant(context.Background(), g.ID); err != nil {
				t.Fatal(err)
			}
			if r := decide("s0", "git push origin main"); r.Decision.Decision != warden.Ask {
				t.Fatalf("the push after its grant was revoked elsewhere: %s %s", r.Decision.Decision, r.Decision.Code)
			}
		})
	}
}
