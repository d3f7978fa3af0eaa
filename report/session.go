package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Status is the verdict on one plugin's metadata in a turn. The non-valid
// statuses are the reasons a turn asks the model to retry (Session.Turn).
type Status string

// The metadata statuses.
const (
	MetaValid         Status = "valid"          // accepted in this turn
	MetaKept          Status = "kept"           // accepted in an earlier turn; blocks in this turn are ignored
	MetaMissing       Status = "missing"        // no block for the plugin
	MetaNotJSON       Status = "not_json"       // the block does not hold one JSON value
	MetaSchemaInvalid Status = "schema_invalid" // the JSON fails the plugin's schema
	MetaTruncated     Status = "truncated"      // the block has no closing tag
	MetaDuplicate     Status = "duplicate"      // more than one block for the plugin in one response
	MetaQuoted        Status = "quoted"         // the only block is code or a comment (Block.Quoted)
)

// FinalStatus is the verdict on the final report in a turn.
type FinalStatus string

// The final report statuses.
const (
	FinalAccepted  FinalStatus = "accepted"  // locked in this turn
	FinalKept      FinalStatus = "kept"      // locked in an earlier turn; FINAL blocks in this turn are ignored
	FinalMissing   FinalStatus = "missing"   // no FINAL block
	FinalEmpty     FinalStatus = "empty"     // the FINAL block shows nothing: white space, zero-width or control characters
	FinalTruncated FinalStatus = "truncated" // the FINAL block has no closing tag
	// FinalDuplicate: the response has more than one FINAL block; the
	// instructions ask for exactly one, and the gate does not pick.
	FinalDuplicate FinalStatus = "duplicate"
	// FinalQuoted: the only FINAL block is code or a comment
	// (Block.Quoted): a format shown, not a report sent.
	FinalQuoted FinalStatus = "quoted"
	// FinalPlaceholder: the report is the instructions' own stand-in
	// ("your final report"): the example echoed back.
	FinalPlaceholder FinalStatus = "placeholder"
)

// MetaCheck is the verdict on one plugin's metadata in a turn.
type MetaCheck struct {
	Plugin string
	Status Status
	// Details explains a not_json or schema_invalid status, one line each.
	Details []string
	// Block is the block the verdict is about: the accepted one, or the
	// last failing one. It is nil for missing, and for kept when the turn
	// has no block for the plugin.
	Block *Block
	// Value is the accepted metadata (compact JSON) for valid and kept.
	Value json.RawMessage
}

// Turn is the completion phase's verdict on one response.
type Turn struct {
	// Number counts the session's turns from 1.
	Number   int
	Response *Response
	Final    FinalStatus
	// Metas holds one check per plugin, in the session's plugin order.
	Metas []MetaCheck
	// Unknown holds META blocks whose plugin attribute names no plugin of
	// the session (or is absent). They are ignored.
	Unknown []Block
	// Done reports that the session is final: it has a locked final report
	// and valid metadata for every plugin.
	Done bool
	// Feedback is the plain-text message for a retry; "" when Done. It
	// names each problem and shows exactly what to send, and never asks for
	// a final report that is already locked.
	Feedback string
}

// Result is a final session's output, shaped for a cache.
type Result struct {
	FinalReport string                     `json:"final_report"`
	Metas       map[string]json.RawMessage `json:"metas"`
}

// Config configures a session. The zero value is a session without plugins,
// with tag prefix "warden" and a random nonce.
type Config struct {
	// Prefix is the tag prefix; "" means DefaultPrefix.
	Prefix string
	// Nonce is the tag nonce; "" means a fresh random one (read from Rand,
	// or crypto/rand when Rand is nil).
	Nonce string
	Rand  io.Reader
	// Plugins makes the session's plugins, one fresh instance each.
	Plugins []Factory
	// SessionID is passed on to OnComplete.
	SessionID string
	// Logger receives the warnings of failed OnComplete calls; nil means
	// slog.Default().
	Logger *slog.Logger
	// CompleteTimeout bounds each OnComplete whose plugin sets no timeout;
	// 0 means 30 seconds.
	CompleteTimeout time.Duration
	// Origin is passed on to OnComplete in each Completion.
	Origin Origin
}

// completeGrace is how long Complete waits past the deadline for a plugin to
// return.
const completeGrace = 100 * time.Millisecond

// DefaultCompleteTimeout bounds OnComplete when nothing else does.
const DefaultCompleteTimeout = 30 * time.Second

// ErrNotFinal is returned by Complete for a session that is not final.
var ErrNotFinal = errors.New("report: the session is not final")

type bound struct {
	p       Plugin
	name    string
	req     Requirements
	schema  *jsonschema.Schema
	example json.RawMessage // compact
	value   json.RawMessage // accepted metadata, nil until then
	timeout time.Duration
}

// Session holds the output contract of one agent session across its turns:
// the nonce, a fresh instance of each plugin, the final report once locked,
// and each plugin's metadata once accepted.
//
// A runtime, for each turn, streams the model's output through NewFilter and
// then hands the complete response to Turn; when Turn reports Done it calls
// Complete. Instructions and Reminder give the text to inject. All methods
// are safe for concurrent use; a Filter is not.
type Session struct {
	mu      sync.Mutex
	tags    Tags
	plugins []*bound
	byName  map[string]*bound
	final   *string
	turns   int
	id      string
	logger  *slog.Logger
	origin  Origin
}

var pluginName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// NewSession starts a session: it draws the nonce, calls each factory once
// and checks each plugin's name and requirements. Any problem is a
// configuration error.
func NewSession(cfg *Config) (*Session, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	var t Tags
	var err error
	if cfg.Nonce == "" {
		t, err = NewTags(cfg.Prefix, cfg.Rand)
	} else {
		t, err = ParseTags(cfg.Prefix, cfg.Nonce)
	}
	if err != nil {
		return nil, err
	}
	s := &Session{tags: t, byName: map[string]*bound{}, id: cfg.SessionID, logger: cfg.Logger, origin: cfg.Origin}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	def := cfg.CompleteTimeout
	if def <= 0 {
		def = DefaultCompleteTimeout
	}
	for i, f := range cfg.Plugins {
		if f == nil {
			return nil, fmt.Errorf("report: plugin %d: factory is nil", i+1)
		}
		p := f()
		if p == nil {
			return nil, fmt.Errorf("report: plugin %d: factory returned no plugin", i+1)
		}
		b, err := bind(p)
		if err != nil {
			return nil, err
		}
		if _, dup := s.byName[b.name]; dup {
			return nil, fmt.Errorf("report: plugin %q is configured twice", b.name)
		}
		if b.timeout <= 0 {
			b.timeout = def
		}
		s.plugins = append(s.plugins, b)
		s.byName[b.name] = b
	}
	return s, nil
}

// bind checks a plugin and compiles its schema.
func bind(p Plugin) (*bound, error) {
	name := p.Name()
	if !pluginName.MatchString(name) {
		return nil, fmt.Errorf("report: plugin name %q: want 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	req := p.Requirements()
	if len(req.Schema) == 0 && req.compiled == nil {
		return nil, fmt.Errorf("report: plugin %q: schema is required", name)
	}
	if strings.TrimSpace(req.Instruction) == "" {
		return nil, fmt.Errorf("report: plugin %q: instruction (for the system prompt) is required", name)
	}
	if strings.TrimSpace(req.ShortInstruction) == "" {
		return nil, fmt.Errorf("report: plugin %q: short instruction (for reminders and examples) is required", name)
	}
	b := &bound{p: p, name: name, req: req, schema: req.compiled, timeout: req.CompleteTimeout}
	if b.schema == nil {
		s, err := compileSchema(name, req.Schema)
		if err != nil {
			return nil, fmt.Errorf("report: plugin %q: %w", name, err)
		}
		b.schema = s
	}
	if len(req.Example) > 0 {
		v, st, det := checkJSON(b.schema, string(req.Example))
		if st != MetaValid {
			return nil, fmt.Errorf("report: plugin %q: example does not satisfy the schema: %s", name, strings.Join(det, "; "))
		}
		b.example = v
	}
	return b, nil
}

// Tags returns the session's tags.
func (s *Session) Tags() Tags { return s.tags }

// Plugins returns the names of the session's plugins, in order.
func (s *Session) Plugins() []string {
	out := make([]string, len(s.plugins))
	for i, b := range s.plugins {
		out[i] = b.name
	}
	return out
}

// NewFilter returns the streaming filter for the next turn, writing to w.
// Once the final report is locked, the filter writes nothing: a retry for
// missing metadata never makes the final report stream again.
func (s *Session) NewFilter(w io.Writer) *Filter {
	f := NewFilter(w, s.tags)
	s.mu.Lock()
	f.mute = s.final != nil
	s.mu.Unlock()
	return f
}

// Done reports whether the session is final.
func (s *Session) Done() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.doneLocked()
}

func (s *Session) doneLocked() bool {
	if s.final == nil {
		return false
	}
	for _, b := range s.plugins {
		if b.value == nil {
			return false
		}
	}
	return true
}

// Turn runs the completion phase on one complete response: it extracts the
// blocks, locks the first valid final report, validates and accepts each
// plugin's metadata, and returns the gate's verdict. The first valid final
// report is locked: FINAL blocks of later turns are ignored. Metadata once
// accepted is kept likewise. A runtime may call Turn on every response,
// including those with tool calls, so that metadata sent early counts.
func (s *Session) Turn(response []byte) *Turn {
	r := Extract(response, s.tags)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns++
	t := &Turn{Number: s.turns, Response: r}

	switch {
	case s.final != nil:
		t.Final = FinalKept
	case r.Final == nil:
		t.Final = FinalMissing
	case r.IgnoredFinals > 0:
		t.Final = FinalDuplicate
	case r.Final.Quoted != "":
		t.Final = FinalQuoted
	case !r.Final.Closed:
		t.Final = FinalTruncated
	case invisible(r.Final.Content):
		t.Final = FinalEmpty
	case placeholder(r.Final.Content):
		t.Final = FinalPlaceholder
	default:
		t.Final = FinalAccepted
		c := r.Final.Content
		s.final = &c
	}

	for _, b := range s.plugins {
		t.Metas = append(t.Metas, s.checkPlugin(b, r))
	}
	for i := range r.Metas {
		if !r.Metas[i].HasPlugin || s.byName[r.Metas[i].Plugin] == nil {
			t.Unknown = append(t.Unknown, r.Metas[i])
		}
	}
	t.Done = s.doneLocked()
	if !t.Done {
		t.Feedback = s.feedback(t)
	}
	return t
}

func (s *Session) checkPlugin(b *bound, r *Response) MetaCheck {
	c := MetaCheck{Plugin: b.name, Status: MetaMissing}
	var mine []*Block
	for i := range r.Metas {
		if blk := &r.Metas[i]; blk.HasPlugin && blk.Plugin == b.name {
			mine = append(mine, blk)
		}
	}
	if b.value == nil && len(mine) > 1 {
		// Exactly once, as the instructions say: the gate does not pick
		// one of two answers.
		c.Status, c.Block = MetaDuplicate, mine[1]
		return c
	}
	for _, blk := range mine {
		if b.value != nil {
			c.Block = blk
			continue
		}
		if blk.Quoted != "" {
			c.Status, c.Block = MetaQuoted, blk
			continue
		}
		if !blk.Closed {
			c.Status, c.Details, c.Block = MetaTruncated, nil, blk
			continue
		}
		v, st, det := checkJSON(b.schema, blk.Content)
		c.Status, c.Details, c.Block = st, det, blk
		if st == MetaValid {
			b.value = v
			c.Value = v
			return c
		}
	}
	if b.value != nil {
		c.Status, c.Value = MetaKept, b.value
	}
	return c
}

// Result returns the final session's output, and false when the session is
// not final.
func (s *Session) Result() (Result, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.doneLocked() {
		return Result{}, false
	}
	r := Result{FinalReport: *s.final, Metas: map[string]json.RawMessage{}}
	for _, b := range s.plugins {
		r.Metas[b.name] = b.value
	}
	return r, true
}

// Restore makes a fresh session final from a cached result. The cached
// final report must not be empty and every plugin's metadata must be there
// and satisfy the plugin's current schema; otherwise Restore returns an
// error naming what is wrong and leaves the session unchanged, and the
// runtime treats the entry as a cache miss. Metadata
// of plugins the session does not have is ignored.
func (s *Session) Restore(r Result) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.final != nil || s.turns > 0 {
		return errors.New("report: restore: the session has already started")
	}
	var problems []string
	if strings.TrimSpace(r.FinalReport) == "" {
		problems = append(problems, "the final report is empty")
	}
	values := make([]json.RawMessage, len(s.plugins))
	for i, b := range s.plugins {
		raw, ok := r.Metas[b.name]
		if !ok || len(raw) == 0 {
			problems = append(problems, fmt.Sprintf("metadata for plugin %q is missing", b.name))
			continue
		}
		v, st, det := checkJSON(b.schema, string(raw))
		if st != MetaValid {
			problems = append(problems, fmt.Sprintf("metadata for plugin %q is %s: %s", b.name, st, strings.Join(det, "; ")))
			continue
		}
		values[i] = v
	}
	if len(problems) > 0 {
		return fmt.Errorf("report: cached result is not usable: %s", strings.Join(problems, "; "))
	}
	fr := r.FinalReport
	s.final = &fr
	for i, b := range s.plugins {
		b.value = values[i]
	}
	return nil
}

// Pending tracks the OnComplete calls that Complete started.
type Pending struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

// Wait blocks until every OnComplete call has returned or timed out and
// returns their failures, which were already logged. Waiting is optional.
func (p *Pending) Wait() []error {
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]error, len(p.errs))
	copy(out, p.errs)
	sort.Slice(out, func(i, j int) bool { return out[i].Error() < out[j].Error() })
	return out
}

// Complete calls every plugin's OnComplete, each in its own goroutine with
// its timeout, and returns at once (fire-and-forget). fromCache tells the
// plugins whether the session was restored from a cache. A failure, timeout
// or panic is logged at WARN on the session's logger and never fails the
// session. The calls outlive ctx's cancellation but keep its values.
// Complete returns ErrNotFinal when the session is not final.
func (s *Session) Complete(ctx context.Context, fromCache bool) (*Pending, error) {
	s.mu.Lock()
	if !s.doneLocked() {
		s.mu.Unlock()
		return nil, ErrNotFinal
	}
	final := *s.final
	type call struct {
		b *bound
		c Completion
	}
	calls := make([]call, len(s.plugins))
	for i, b := range s.plugins {
		calls[i] = call{b, s.origin.completion(Completion{Plugin: b.name, SessionID: s.id, FinalReport: final, Meta: b.value, FromCache: fromCache})}
	}
	s.mu.Unlock()

	pend := &Pending{}
	base := context.WithoutCancel(ctx)
	for _, c := range calls {
		pend.wg.Add(1)
		go func() {
			defer pend.wg.Done()
			err := runComplete(base, c.b, c.c)
			if err == nil {
				return
			}
			s.logger.LogAttrs(base, slog.LevelWarn, "report: plugin on-complete failed",
				slog.String("plugin", c.b.name), slog.Bool("from_cache", fromCache), slog.String("error", err.Error()))
			pend.mu.Lock()
			pend.errs = append(pend.errs, fmt.Errorf("plugin %q: %w", c.b.name, err))
			pend.mu.Unlock()
		}()
	}
	return pend, nil
}

func runComplete(ctx context.Context, b *bound, c Completion) error {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("on-complete panicked: %v", r)
			}
		}()
		done <- b.p.OnComplete(ctx, c)
	}()
	select {
	case err := <-done:
		if err != nil && ctx.Err() != nil {
			return fmt.Errorf("on-complete did not finish within %s: %w", b.timeout, err)
		}
		return err
	case <-ctx.Done():
	}
	// Give a plugin that honours its context a moment to say so.
	grace := time.NewTimer(completeGrace)
	defer grace.Stop()
	select {
	case err := <-done:
		if err == nil {
			return nil
		}
		return fmt.Errorf("on-complete did not finish within %s: %w", b.timeout, err)
	case <-grace.C:
		return fmt.Errorf("on-complete did not finish within %s and ignored its deadline", b.timeout)
	}
}

// Resume brings a fresh session back to the state an earlier process left:
// the locked final report (nil: none yet), the metadata accepted so far and
// the number of turns already taken. A runtime that keeps a session between
// processes (a host's hooks) stores these after each Turn and resumes with
// them, so that a retry never asks again for what was accepted. Each
// metadata value must satisfy its plugin's current schema and name a plugin
// of the session; otherwise Resume returns an error and changes nothing.
func (s *Session) Resume(final *string, metas map[string]json.RawMessage, turns int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.final != nil || s.turns > 0 {
		return errors.New("report: resume: the session has already started")
	}
	values := map[string]json.RawMessage{}
	for name, raw := range metas {
		b := s.byName[name]
		if b == nil {
			return fmt.Errorf("report: resume: plugin %q is not configured", name)
		}
		v, st, det := checkJSON(b.schema, string(raw))
		if st != MetaValid {
			return fmt.Errorf("report: resume: metadata for plugin %q is %s: %s", name, st, strings.Join(det, "; "))
		}
		values[name] = v
	}
	if final != nil {
		f := *final
		s.final = &f
	}
	for name, v := range values {
		s.byName[name].value = v
	}
	s.turns = max(turns, 0)
	return nil
}

// Final returns the locked final report, and false when there is none yet.
func (s *Session) Final() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.final == nil {
		return "", false
	}
	return *s.final, true
}

// Accepted returns the metadata accepted so far, by plugin name.
func (s *Session) Accepted() map[string]json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]json.RawMessage{}
	for _, b := range s.plugins {
		if b.value != nil {
			out[b.name] = b.value
		}
	}
	return out
}
