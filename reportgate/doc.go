// Package reportgate holds agents on real hosts to the final-report
// contract of package report (docs/policy.md, "Final reports") as the
// policy's `report:` section configures it.
//
// Each session held to the contract gets a random nonce of its own, drawn
// by warden and kept in the store (never taken from model output), and the
// instructions that carry it: in the session-start text and after each
// compaction ([Instructions]). At the end of each turn the host's hook hands
// the last assistant message to [Gate.Stop], which validates the final
// report and each plugin's metadata, keeps what was accepted (the first
// final report is locked; a retry never asks for it again), and either
// holds the turn open with the retry text, or lets it end: when the report
// is final (it is stored, recorded in the audit trail and handed to the
// plugins' on-complete commands once), when the report is not required, or
// when the retry limit is reached (the failure is stored and recorded).
//
// Package hook/handler calls it at the hook events, in `warden hook` and
// in hookd alike; the host adapters (package hook) render a held turn in
// each host's block shape.
//
// The gate never loops: the retry counter lives in the store and is
// counted up before a turn is held open, and any failure (policy, store,
// transcript) lets the turn end.
//
// Stability: this package is internal to warden in spirit. Its API serves
// the hook handler and warden's commands and changes with them in any
// release; a Go program checks a final report with package report.
package reportgate
