package serve

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", for NOTIFY
)

// notifyChannel is the PostgreSQL channel the replicas of a service tell
// each other about changes on: the payload is the event name (approvals,
// grants, audit).
const notifyChannel = "warden_serve"

func isPostgres(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// changed publishes a change to this replica's event streams and, on
// PostgreSQL, to every other replica's (NOTIFY), so that a page served by
// any replica shows it at once. The store's watch (Server.watch) catches
// anything a notification misses.
func (s *Server) changed(event string) {
	s.hub.publish(event)
	if s.notifyDB == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := s.notifyDB.ExecContext(ctx, "SELECT pg_notify($1, $2)", notifyChannel, event); err != nil {
		s.log.Printf("notify the other replicas: %v", err)
	}
}

// listen follows the other replicas' notifications until ctx ends,
// connecting again after a failure.
func (s *Server) listen(ctx context.Context) {
	for ctx.Err() == nil {
		err := func() error {
			conn, err := pgx.Connect(ctx, s.cfg.Store)
			if err != nil {
				return err
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
				return err
			}
			// Anything missed while not listening.
			s.hub.publish("approvals")
			for {
				n, err := conn.WaitForNotification(ctx)
				if err != nil {
					return err
				}
				s.hub.publish(n.Payload)
			}
		}()
		if ctx.Err() != nil {
			return
		}
		s.log.Printf("listen for the other replicas: %v (again in 1s)", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// openNotify opens the connection pool NOTIFY goes through.
func openNotify(url string) (*sql.DB, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(2)
	return db, nil
}
