package gemini

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/host/internal/wire"
)

// Adapter is Gemini CLI's hook.Host.
type Adapter struct{}

var _ hook.Host = Adapter{}

func (Adapter) Name() string                { return Host }
func (Adapter) EndOfTurn(event string) bool { return EndOfTurn(event) }
func (Adapter) Interactive() bool           { return Interactive() }

func (Adapter) Failure(event string, d warden.Decision) []byte { return Failure(event, d).Marshal() }

// Answer: a block at AfterAgent makes Gemini CLI retry the turn with the
// reason as the prompt.
func (Adapter) Answer(ev hook.Event, a hook.Answer, r hook.Render) []byte {
	if a.Block != "" {
		return Output{Decision: "block", Reason: a.Block}.Marshal()
	}
	if a.Decision != nil {
		return Decide(*a.Decision, Options{NoAllow: r.Audit, NoAsk: !r.Prompts, Input: a.Input}).Marshal()
	}
	if ev.Kind == hook.Model {
		llm, _ := ev.LLM.(*LLMRequest)
		return ModelContext(llm, a.Context).Marshal()
	}
	return Context(ev.Name, a.Context).Marshal()
}

// Decode reads Gemini CLI's hook JSON.
func (Adapter) Decode(data []byte) (hook.Event, error) {
	in, err := ParseInput(data)
	if err != nil {
		return hook.Event{}, err
	}
	ev := hook.Event{Name: in.HookEventName, Session: in.SessionID, Cwd: in.Cwd, Source: in.Source, Prompt: in.Prompt, Transcript: in.TranscriptPath}
	switch in.HookEventName {
	case SessionStart:
		ev.Kind = hook.SessionStart
	case BeforeAgent:
		ev.Kind = hook.Prompt
	case BeforeTool:
		ev.Kind = hook.PreTool
	case AfterTool:
		ev.Kind = hook.PostTool
		ev.Output = in.ResponseText()
		ev.Failed = in.Failed()
		ev.Outcome = outcome(ev.Failed, ev.Output)
	case BeforeModel:
		// Gemini CLI fires BeforeModel before every model request, its
		// subagents' too, and keeps in its history the governance text
		// warden gave at SessionStart or BeforeAgent until it compresses
		// the history: only a main-chat request without that text is
		// warden's business (see hook/handler's modelText). The others are
		// answered without loading anything.
		if in.LLMRequest.MainChat() && !in.LLMRequest.CarriesMarker() {
			ev.Kind, ev.LLM = hook.Model, in.LLMRequest
		}
	case PreCompress:
		// Left Other: Gemini CLI fires PreCompress before every model
		// turn, before it decides whether to compress, so it is no sign of
		// a compaction (`warden init` no longer wires it); BeforeModel
		// shows one.
	case AfterAgent:
		ev.Kind, ev.Message = hook.Stop, in.PromptResponse
	case SessionEnd:
		ev.Kind = hook.End
	default:
		if in.ToolName != "" {
			return hook.Event{}, hook.UnknownToolEvent(in.HookEventName, in.ToolName)
		}
	}
	if in.ToolName != "" {
		ev.Call = in.ToolCall()
	}
	return ev, nil
}

// outcome: Gemini CLI's AfterTool response carries an error when the tool
// failed; its shell tool reports a command's non-zero exit in its text
// ("Exit Code: 1") and no error.
func outcome(failed bool, text string) string {
	if failed {
		return warden.OutcomeFail
	}
	if code, ok := wire.ExitCode(text); ok {
		return wire.ExitOutcome(code)
	}
	switch {
	case wire.ExitLine().MatchString(text):
		return "" // exit lines that disagree
	case signalLine().MatchString(text):
		return warden.OutcomeFail // killed by a signal: no exit code line
	case strings.Contains(text, "was cancelled"), strings.HasPrefix(text, "Command moved to background"):
		return "" // it did not finish
	}
	return warden.OutcomeOK // Gemini CLI writes "Exit Code: N" only for N other than 0
}

// signalLine is Gemini CLI's report of a command killed by a signal,
// compiled on first use (the warden-hook client never needs it).
var signalLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^Signal: \S`) })

// Interactive reports whether the Gemini CLI that runs this process is
// interactive: only then can it show the confirmation a hook's "ask"
// requests (headless, an ask waits forever). It looks at the ancestor
// processes (Linux /proc): a gemini process without -p/--prompt whose
// stdin is a terminal. Anything else, or no /proc, counts as headless, and
// an ask goes to warden's queue.
func Interactive() bool {
	pid := os.Getppid()
	for range 6 {
		if pid <= 1 {
			return false
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			return false
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if IsProcess(args) {
			for _, a := range args[1:] {
				if a == "-p" || a == "--prompt" || strings.HasPrefix(a, "--prompt=") {
					return false
				}
			}
			tty, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", pid))
			return err == nil && (strings.HasPrefix(tty, "/dev/pts/") || strings.HasPrefix(tty, "/dev/tty"))
		}
		pid = ParentPID(pid)
	}
	return false
}

// IsProcess reports whether a command line is Gemini CLI's.
func IsProcess(args []string) bool {
	for _, a := range args[:min(len(args), 3)] {
		base := filepath.Base(a)
		if base == "gemini" || base == "gemini.js" || strings.Contains(a, "gemini-cli") {
			return true
		}
	}
	return false
}

// ParentPID returns a process's parent, or 0.
func ParentPID(pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...; comm may contain spaces and parentheses.
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}
