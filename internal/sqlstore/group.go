package sqlstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/warden-run/warden"
)

// groupWriter is the group commit of WriteDecision: one goroutine per
// store takes every write that is waiting, runs them one after the other
// in one transaction, each under a savepoint of its own (one that fails
// is rolled back alone), and commits once. Under load, many decisions
// share one disk sync; alone, a write waits for nobody.
type groupWriter struct {
	mu      sync.Mutex
	queue   []*writeReq
	wake    chan struct{}
	done    chan struct{}
	running bool
	stopped bool
}

// maxGroup bounds the writes of one transaction.
const maxGroup = 256

// groupTimeout bounds one group's transaction.
const groupTimeout = 30 * time.Second

type writeReq struct {
	ctx context.Context
	id  string
	fn  func(*warden.Session, bool) (*warden.DecisionRecord, error)
	res chan writeRes
}

type writeRes struct {
	sess warden.Session
	rec  warden.AuditRecord
	err  error
}

// write queues r and waits until the transaction that holds it has
// committed (or failed). It always waits for the answer: r.fn runs in the
// writer's goroutine, and the caller may read what fn wrote only after.
func (g *groupWriter) write(s *Store, r *writeReq) writeRes {
	r.res = make(chan writeRes, 1)
	g.mu.Lock()
	if g.stopped {
		g.mu.Unlock()
		return writeRes{err: fmt.Errorf("update session %q: the store is closed", r.id)}
	}
	if !g.running {
		g.running = true
		g.wake = make(chan struct{}, 1)
		g.done = make(chan struct{})
		go g.loop(s)
	}
	g.queue = append(g.queue, r)
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
	return <-r.res
}

// stop ends the writer once the waiting writes are done.
func (g *groupWriter) stop() {
	g.mu.Lock()
	g.stopped = true
	running := g.running
	g.mu.Unlock()
	if running {
		select {
		case g.wake <- struct{}{}:
		default:
		}
		<-g.done
	}
}

func (g *groupWriter) loop(s *Store) {
	defer close(g.done)
	for {
		g.mu.Lock()
		n := min(len(g.queue), maxGroup)
		batch := g.queue[:n:n]
		g.queue = g.queue[n:]
		stopped := g.stopped
		g.mu.Unlock()
		if len(batch) > 0 {
			s.commitGroup(batch)
			continue
		}
		if stopped {
			return
		}
		<-g.wake
	}
}

// commitGroup runs a group of writes in one transaction.
func (s *Store) commitGroup(batch []*writeReq) {
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	res := make([]writeRes, len(batch))
	fail := func(err error) {
		for i, r := range batch {
			if res[i].err == nil {
				res[i] = writeRes{err: fmt.Errorf("update session %q: %w", r.id, err)}
			}
			r.res <- res[i]
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		fail(err)
		return
	}
	defer tx.Rollback()
	q := prepared{s, tx}
	alone := len(batch) == 1
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			// Its caller has stopped waiting for a decision: make none.
			res[i].err = fmt.Errorf("update session %q: %w", r.id, err)
			continue
		}
		if alone {
			res[i].sess, res[i].rec, res[i].err = s.writeDecision(ctx, q, r.id, r.fn)
			continue
		}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT w"); err != nil {
			fail(err)
			return
		}
		sess, rec, err := s.writeDecision(ctx, q, r.id, r.fn)
		if err != nil {
			if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT w"); rerr != nil {
				res[i].err = err
				fail(rerr)
				return
			}
		}
		if _, rerr := tx.ExecContext(ctx, "RELEASE SAVEPOINT w"); rerr != nil {
			res[i].err = err
			fail(rerr)
			return
		}
		res[i] = writeRes{sess: sess, rec: rec, err: err}
	}
	if alone && res[0].err != nil {
		// Nothing of a failed write is kept.
		batch[0].res <- res[0]
		return
	}
	if err := tx.Commit(); err != nil {
		for i := range res {
			if res[i].err == nil {
				res[i].err = fmt.Errorf("commit: %w", err)
			}
		}
	}
	for i, r := range batch {
		r.res <- res[i]
	}
}
