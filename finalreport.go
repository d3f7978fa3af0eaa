package warden

import (
	"context"
	"encoding/json"
	"time"
)

// Report is what the policy's report contract (package reportgate) holds of one
// session: the nonce of its tags, the end-of-turn gate's progress, and the
// final report with each plugin's metadata as they are accepted.
type Report struct {
	Session string `json:"session"`
	// Nonce is the random part of the session's tags, drawn by warden when
	// the instructions were first given; never taken from model output.
	Nonce string `json:"nonce"`
	// Status is ReportPending, ReportFinal or ReportFailed.
	Status string `json:"status"`
	// Turns counts the ends of turns the gate checked; Retries those it
	// held open with the retry text.
	Turns   int `json:"turns"`
	Retries int `json:"retries"`
	// FinalReport is the locked final report ("" until one is accepted);
	// Metas the accepted metadata (compact JSON) by plugin name.
	FinalReport string                     `json:"final_report,omitempty"`
	Metas       map[string]json.RawMessage `json:"metas,omitempty"`
	// Problem is the last retry text, or why the report failed.
	Problem string `json:"problem,omitempty"`
	// Completed reports that the plugins' on-complete commands were
	// started (at most once per report).
	Completed bool      `json:"completed"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Report statuses.
const (
	ReportPending = "pending"
	ReportFinal   = "final"
	ReportFailed  = "failed"
)

// ReportFilter selects reports. Zero fields select everything.
type ReportFilter struct {
	Status string
	Limit  int
}

// ReportStore keeps the sessions' final reports. Safe for concurrent use.
type ReportStore interface {
	// UpdateReport runs fn on the session's report, creating it (with
	// Session set and every other field zero, created true) when there is
	// none, and stores what fn leaves; UpdatedAt (and CreatedAt of a new
	// report) are set by the store. It is atomic like UpdateSession; if fn
	// returns an error nothing is stored and UpdateReport returns it.
	UpdateReport(ctx context.Context, session string, fn func(r *Report, created bool) error) (Report, error)
	// Report returns a session's report, or an error wrapping ErrNotFound.
	Report(ctx context.Context, session string) (Report, error)
	// Reports lists reports, most recently updated first.
	Reports(ctx context.Context, f ReportFilter) ([]Report, error)
}
