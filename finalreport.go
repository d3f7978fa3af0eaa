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

// CachedReport is an entry of the response cache (docs/reports.md,
// "Response cache"): a final report and its plugins' metadata, kept under
// the key of the request that produced it, so that an identical request
// later is answered from it.
type CachedReport struct {
	// Key is the request key (package reportgate's CacheKey): a digest of
	// the normalised request, the project, the policy, the plugin set, the
	// host and the role.
	Key string `json:"key"`
	// Request is the request as the user wrote it, redacted and cut, for
	// people to read; it is not part of any comparison.
	Request string `json:"request"`
	Host    string `json:"host,omitempty"`
	Role    string `json:"role,omitempty"`
	// Plugins is the digest of the plugin files the report was checked
	// against (report.PluginFiles.Hash), for people and for a check.
	Plugins     string                     `json:"plugins"`
	FinalReport string                     `json:"final_report"`
	Metas       map[string]json.RawMessage `json:"metas"`
	// Session is the session that produced the report.
	Session string `json:"session"`
	// Hits counts the requests served from the entry; LastHit is the last.
	Hits      int       `json:"hits"`
	LastHit   time.Time `json:"last_hit,omitzero"`
	CreatedAt time.Time `json:"created_at"`
}

// ReportRequest is what the response cache keeps of one session's user
// requests: the first one (its digest and, redacted, its text) and how
// many there were, and whether the session was served from the cache.
type ReportRequest struct {
	Session string `json:"session"`
	// Sum is the digest of the first request, normalised
	// (reportgate.RequestSum); Request its text, redacted and cut.
	Sum     string `json:"sum"`
	Request string `json:"request"`
	// Prompts counts the session's user requests.
	Prompts int `json:"prompts"`
	// Served is the key of the cache entry the session was answered from,
	// "" when it was not.
	Served    string    `json:"served,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// ReportCache keeps the response cache. Safe for concurrent use.
type ReportCache interface {
	// PutCachedReport stores an entry, replacing one with the same key
	// (its hits start again at 0). CreatedAt is set by the store.
	PutCachedReport(ctx context.Context, e CachedReport) (CachedReport, error)
	// CachedReport returns the entry with the key, or an error wrapping
	// ErrNotFound.
	CachedReport(ctx context.Context, key string) (CachedReport, error)
	// HitCachedReport counts one request served from the entry (Hits,
	// LastHit at the store's time); an unknown key is ErrNotFound.
	HitCachedReport(ctx context.Context, key string) error
	// CachedReports lists entries, newest first; limit > 0 keeps that many.
	CachedReports(ctx context.Context, limit int) ([]CachedReport, error)
	// DeleteCachedReports deletes the entry with the key (key set), or
	// every entry created before the time (before set), or every entry
	// (both zero), and returns how many it deleted.
	DeleteCachedReports(ctx context.Context, key string, before time.Time) (int, error)
	// NoteReportRequest counts one user request of a session: the first
	// call keeps sum and request, later calls only count. It returns the
	// record after the call.
	NoteReportRequest(ctx context.Context, session, sum, request string) (ReportRequest, error)
	// ServeReportRequest marks the session answered from the cache entry
	// with the key.
	ServeReportRequest(ctx context.Context, session, key string) error
	// ReportRequest returns a session's record, or an error wrapping
	// ErrNotFound.
	ReportRequest(ctx context.Context, session string) (ReportRequest, error)
}
