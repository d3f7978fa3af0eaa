package serve

import (
	"encoding/json"
	"path/filepath"

	"net/http"
	"strings"

	"github.com/warden-run/warden"

	"github.com/warden-run/warden/replay"
)

// ReplayRequest is the body of POST /v1/policy/replay: a candidate policy
// (YAML, parsed as if it were the live policy file; empty: the live one)
// and how many of the newest audit records to decide again.
type ReplayRequest struct {
	Policy string `json:"policy,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// DefaultReplayLimit is how many audit records a replay decides again when
// the request sets no limit; MaxReplayLimit is the most it takes.
const (
	DefaultReplayLimit = 5000
	MaxReplayLimit     = 50000
)

// replayAudit decides the team's recorded calls (the newest audit records)
// again under a posted policy, beside the live one: the outcomes, the
// calls decided otherwise, and the most frequent asks with the allow rule
// that would stop each (replay.Report). Nothing is written to the store:
// each policy decides in a scratch store of its own.
func (s *Server) replayAudit(w http.ResponseWriter, r *http.Request) {
	var req ReplayRequest
	if !readJSON(w, r, &req) {
		return
	}
	if req.Limit <= 0 {
		req.Limit = DefaultReplayLimit
	}
	if req.Limit > MaxReplayLimit {
		httpError(w, http.StatusBadRequest, "limit: at most 50000 records")
		return
	}
	live, err := s.engine()
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	cand, label := live, "live policy"
	if strings.TrimSpace(req.Policy) != "" {
		eng, findings := s.parsePolicy(req.Policy)
		if eng == nil {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusUnprocessableEntity)
			json.NewEncoder(w).Encode(map[string]any{"error": "the posted policy has errors", "findings": findings})
			return
		}
		cand, label = eng, "posted policy"
	}
	calls, err := replay.FromAudit(r.Context(), s.store, filepath.Dir(s.file), warden.AuditFilter{Limit: req.Limit}, nil)
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	j, err := replay.NewJudgeEngine(r.Context(), cand)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer j.Close()
	opt := replay.Options{Policy: label}
	var old *replay.Judge
	if cand != live {
		if old, err = replay.NewJudgeEngine(r.Context(), live); err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		defer old.Close()
		opt.Against = "live policy"
	}
	rep, err := replay.RunJudges(r.Context(), calls, nil, j, old, opt)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, rep)
}
