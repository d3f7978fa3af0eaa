// Package server is `warden hookd`, the resident process behind the
// warden-hook client (package internal/hookd): it answers each hook call
// exactly as `warden hook` would, through package hook/handler, with the
// compiled policies and open stores kept between calls (see package hook
// for the whole way of one event). It is apart from internal/hookd so that
// the client, which hosts start for every event, links no SQLite, YAML or
// policy engine.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/client"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/gate"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/hook/handler"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/sqlite"
)

// Idle is how long hookd waits for a call before it exits (the default).
const Idle = 15 * time.Minute

// maxCached bounds the compiled policies and open stores hookd keeps.
const maxCached = 64

// Hook runs `warden hook` with args (the host and its flags) in the
// runtime rt and returns its exit code: the command's flags and printing,
// given by package internal/cli.
type Hook func(ctx context.Context, rt *handler.Runtime, args []string, stdin io.Reader, stdout, stderr io.Writer) int

// New returns a hookd for socket (an absolute path) that exits after idle
// without a call (0: never), logs to log and answers calls with hook.
func New(socket string, idle time.Duration, log *log.Logger, hook Hook) *Server {
	return &Server{socket: socket, idle: idle, log: log, hook: hook,
		engines: gate.Sources{Max: maxCached}, stores: map[string]*cachedStore{}}
}

// Server is `warden hookd`: it serves hook calls on a Unix socket until it
// is idle, stopped, interrupted, or its binary or socket changes. Make one
// with New.
type Server struct {
	socket string
	idle   time.Duration
	log    *log.Logger
	hook   Hook

	engines gate.Sources // by policy file

	mu       sync.Mutex
	stores   map[string]*cachedStore // by store key
	lastCall time.Time
	active   int
	stopping bool
	stop     chan string // the reason to stop
	inflight sync.WaitGroup
}

type cachedStore struct {
	st warden.Store
	// The SQLite file and its -wal and -shm files as they were when the
	// store was opened (nil: none), to notice one was removed or replaced.
	file, wal, shm os.FileInfo
	refs           int
	gone           bool // replaced: close when the last call is done
	used           time.Time
}

// stale says which of a SQLite store's -wal and -shm files was removed
// or replaced since it was opened ("" none). A connection that keeps its
// WAL after the -wal file was removed writes every record to a deleted
// file, which no other process (warden audit) ever reads; one whose -shm
// was removed no longer shares its WAL index with them.
//
// The store file itself replaced (a backup restored with mv) or removed
// is not stale here: the store notices that itself before its next query
// and opens the new file, after it dropped the old file's connections
// and WAL (see sqlite.Open). hookd must not open a second store on the
// new file meanwhile: while a call still used the first, its connections
// and the old WAL would still be there for the new file to take. hookd
// takes the new file's -wal and -shm as they are after that.
func (c *cachedStore) stale(file string, fi os.FileInfo) string {
	if fi == nil || !os.SameFile(fi, c.file) {
		c.file, c.wal, c.shm = fi, nil, nil
		return ""
	}
	for _, f := range []struct {
		name string
		was  *os.FileInfo
	}{{file + "-wal", &c.wal}, {file + "-shm", &c.shm}} {
		if *f.was == nil {
			*f.was, _ = os.Stat(f.name)
			continue
		}
		if now, err := os.Stat(f.name); err != nil || !os.SameFile(now, *f.was) {
			return "file " + filepath.Base(f.name)
		}
	}
	return ""
}

// Serve serves until hookd stops; it returns hookd.ErrLocked when another
// hookd serves the socket.
func (s *Server) Serve(ctx context.Context) error {
	if err := hookd.PrepareDir(filepath.Dir(s.socket)); err != nil {
		return fmt.Errorf("socket folder: %w", err)
	}
	unlock, err := hookd.Lock(s.socket + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	// Holding the lock, any socket file left behind is stale.
	os.Remove(s.socket)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: s.socket, Net: "unix"})
	if err != nil {
		return err
	}
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(s.socket, 0o600); err != nil {
		ln.Close()
		return err
	}
	sockInfo, err := os.Stat(s.socket)
	if err != nil {
		ln.Close()
		return err
	}
	exe, exeInfo := executable()
	s.stop = make(chan string, 1)
	s.lastCall = time.Now()
	s.log.Printf("serving %s (pid %d, idle exit after %s)", s.socket, os.Getpid(), s.idle)

	go func() {
		for {
			c, err := ln.AcceptUnix()
			if err != nil {
				if !s.isStopping() {
					s.shutdown("accept: " + err.Error())
				}
				return
			}
			if !s.begin() {
				c.Close()
				return
			}
			go func() {
				defer s.end()
				s.handle(ctx, c)
				if why := changed(exe, exeInfo); why != "" {
					s.shutdown(why)
				}
			}()
		}
	}()

	tick := time.NewTicker(min(max(s.idle/4, time.Second), 30*time.Second))
	defer tick.Stop()
	var why string
loop:
	for {
		select {
		case why = <-s.stop:
			break loop
		case <-ctx.Done():
			why = "interrupted"
			break loop
		case <-tick.C:
			if w := changed(exe, exeInfo); w != "" {
				why = w
				break loop
			}
			if fi, err := os.Stat(s.socket); err != nil || !os.SameFile(fi, sockInfo) {
				why = "the socket file was removed or replaced"
				break loop
			}
			if s.idleFor() {
				why = fmt.Sprintf("no call for %s", s.idle)
				break loop
			}
		}
	}
	// Said before the socket closes: whoever sees hookd gone can read why.
	s.log.Printf("stopped: %s", why)
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	ln.Close()
	s.inflight.Wait()
	if fi, err := os.Stat(s.socket); err == nil && os.SameFile(fi, sockInfo) {
		os.Remove(s.socket)
	}
	s.mu.Lock()
	for k, c := range s.stores {
		c.st.Close()
		delete(s.stores, k)
	}
	s.mu.Unlock()
	s.log.Printf("closed %s", s.socket)
	return nil
}

// begin counts a call in; false once hookd is stopping.
func (s *Server) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return false
	}
	s.active++
	s.lastCall = time.Now()
	s.inflight.Add(1)
	return true
}

func (s *Server) end() {
	s.mu.Lock()
	s.active--
	s.lastCall = time.Now()
	s.mu.Unlock()
	s.inflight.Done()
}

func (s *Server) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

func (s *Server) idleFor() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idle > 0 && s.active == 0 && time.Since(s.lastCall) >= s.idle
}

func (s *Server) shutdown(why string) {
	select {
	case s.stop <- why:
	default:
	}
}

// handle answers one connection: one request, one response.
func (s *Server) handle(ctx context.Context, c *net.UnixConn) {
	defer c.Close()
	var resp hookd.Response
	defer func() {
		if r := recover(); r != nil {
			s.log.Printf("internal error (panic: %v)\n%s", r, handler.PanicStack())
			resp = hookd.Response{Refused: "internal error"}
		}
		resp.V = hookd.Version
		out, _ := json.Marshal(resp)
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		c.Write(out)
	}()
	if rc, err := c.SyscallConn(); err != nil {
		resp.Refused = err.Error()
		return
	} else if err := hookd.CheckPeer(rc); err != nil {
		s.log.Print(err)
		resp.Refused = err.Error()
		return
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	data, err := io.ReadAll(io.LimitReader(c, hookd.MaxMessage+1))
	if err != nil || len(data) > hookd.MaxMessage {
		resp.Refused = fmt.Sprintf("unreadable request (%d bytes): %v", len(data), err)
		return
	}
	var req hookd.Request
	if err := json.Unmarshal(data, &req); err != nil {
		resp.Refused = "request is not JSON: " + err.Error()
		return
	}
	if req.V != hookd.Version {
		resp.Refused = fmt.Sprintf("protocol version %d, this hookd speaks %d", req.V, hookd.Version)
		return
	}
	switch req.Op {
	case hookd.OpPing:
		resp.PID = os.Getpid()
	case hookd.OpStop:
		resp.PID = os.Getpid()
		s.shutdown("asked to stop")
	case hookd.OpHook:
		if req.Dir == "" || !filepath.IsAbs(req.Dir) {
			resp.Refused = "request without an absolute working directory"
			return
		}
		if req.Home != os.Getenv("HOME") {
			// ~ in a policy means the caller's home.
			resp.Refused = "this hookd runs with another HOME"
			return
		}
		var out, errb bytes.Buffer
		rt := &handler.Runtime{Dir: req.Dir, Interactive: func(hook.Host) bool { return req.Interactive },
			Engine: s.engine, Store: s.store, CallID: req.CallID}
		resp.Code = s.hook(ctx, rt, req.Args, bytes.NewReader(req.Stdin), &out, &errb)
		resp.Stdout, resp.Stderr = out.Bytes(), errb.Bytes()
	default:
		resp.Refused = fmt.Sprintf("unknown operation %q", req.Op)
	}
}

// engine returns the compiled policy for a project, as package gate's
// one reload rule keeps it (gate.Sources: compiled again when the policy
// file's content, its intents file or a report plugin changed, only ever
// from a whole file), with its view of the workspace checked.
func (s *Server) engine(cwd, policyFile string) (*engine.Engine, error) {
	if policyFile == "" {
		f, err := handler.FindPolicy(cwd)
		if err != nil {
			return nil, err
		}
		policyFile = f
	}
	return s.engines.Engine(policyFile)
}

// store returns the open store for a policy. A SQLite store whose -wal or
// -shm file was removed or replaced since it was opened is closed and
// opened again (a cheap os.Stat of each before every use): writing to the
// old ones would lose the audit trail. A store whose file itself was
// replaced or removed opens the new one itself (see cachedStore.stale).
// When opening it again fails, the error names the store, and the call
// is denied.
func (s *Server) store(ctx context.Context, policyFile, storeURL string) (warden.Store, func(), error) {
	key, file := storeURL, ""
	switch {
	case storeURL == "":
		file = client.DefaultStorePath(policyFile)
		key = "sqlite:" + file
	case strings.HasPrefix(storeURL, "postgres://"), strings.HasPrefix(storeURL, "postgresql://"):
	default:
		file = client.SQLiteFile(storeURL)
		key = "sqlite:" + file
	}
	var fi os.FileInfo
	if file != "" {
		var err error
		fi, err = os.Stat(file)
		// A store file that turned empty is an error, not a new store.
		if err := sqlite.CheckInfo(file, fi, err); err != nil {
			return nil, nil, err
		}
	}
	s.mu.Lock()
	c := s.stores[key]
	why := ""
	if c != nil && file != "" {
		why = c.stale(file, fi)
	}
	if c != nil && why == "" {
		c.refs++
		c.used = time.Now()
		s.mu.Unlock()
		return c.st, func() { s.release(c) }, nil
	}
	if c != nil {
		c.gone = true
		delete(s.stores, key)
		if c.refs == 0 {
			c.st.Close()
		}
	}
	s.mu.Unlock()
	if why != "" {
		s.log.Printf("store %s: its %s was removed or replaced since it was opened: opening it again", file, why)
	}

	st, err := client.OpenStore(ctx, policyFile, storeURL)
	if err != nil {
		if why != "" {
			return nil, nil, fmt.Errorf("the warden store %s: its %s was removed or replaced, and opening it again failed: %w", file, why, err)
		}
		return nil, nil, err
	}
	nc := &cachedStore{st: st, refs: 1, used: time.Now()}
	if file != "" {
		if nc.file, err = os.Stat(file); err != nil {
			st.Close()
			return nil, nil, fmt.Errorf("open store %s: %w", file, err)
		}
		// The store is open, with its WAL (sqlite.Open runs in WAL mode
		// and keeps connections): the files it writes to now.
		nc.wal, _ = os.Stat(file + "-wal")
		nc.shm, _ = os.Stat(file + "-shm")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.stores[key]; old != nil {
		// Another call opened it meanwhile: keep one, retire the other.
		old.gone = true
		if old.refs == 0 {
			old.st.Close()
		}
	}
	s.stores[key] = nc
	if len(s.stores) > maxCached {
		evictOldest(s.stores, func(c *cachedStore) time.Time { return c.used }, func(c *cachedStore) {
			c.gone = true
			if c.refs == 0 {
				c.st.Close()
			}
		})
	}
	return st, func() { s.release(nc) }, nil
}

func (s *Server) release(c *cachedStore) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.refs--
	if c.gone && c.refs == 0 {
		c.st.Close()
	}
}

// evictOldest removes the least recently used entry of a cache.
func evictOldest[T any](m map[string]T, used func(T) time.Time, drop func(T)) {
	var oldest string
	var at time.Time
	for k, v := range m {
		if t := used(v); oldest == "" || t.Before(at) {
			oldest, at = k, t
		}
	}
	if oldest != "" {
		if drop != nil {
			drop(m[oldest])
		}
		delete(m, oldest)
	}
}

// executable returns this program's path and file, to notice an upgrade.
func executable() (string, os.FileInfo) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil
	}
	fi, _ := os.Stat(exe)
	return exe, fi
}

// changed says why hookd should stop because its binary changed, or "".
func changed(exe string, was os.FileInfo) string {
	if exe == "" || was == nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil || !os.SameFile(fi, was) || !fi.ModTime().Equal(was.ModTime()) || fi.Size() != was.Size() {
		return "its binary " + exe + " changed"
	}
	return ""
}
