package replay

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // OpenCode keeps its sessions in SQLite
)

// readOpenCode reads OpenCode's database (opencode.db, in its data folder):
// every tool part is a call (the tool and its input, as OpenCode's plugin
// hook gives them), in its session's folder; a session with a parent is a
// subagent's (depth 1 and more). project, when set, keeps only the sessions
// in that folder or below it. The database is opened read-only.
func readOpenCode(path, project string) (Transcript, error) {
	t := Transcript{Host: "opencode"}
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro&_pragma=busy_timeout(5000)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return t, err
	}
	defer db.Close()
	ctx := context.Background()
	depth := map[string]int{}
	dirs := map[string]string{}
	rows, err := db.QueryContext(ctx, `SELECT id, COALESCE(parent_id, ''), directory FROM session`)
	if err != nil {
		return t, fmt.Errorf("%s: not an OpenCode database replay reads (%v)", path, err)
	}
	parent := map[string]string{}
	for rows.Next() {
		var id, par, dir string
		if err := rows.Scan(&id, &par, &dir); err != nil {
			rows.Close()
			return t, err
		}
		parent[id], dirs[id] = par, dir
	}
	rows.Close()
	for id := range parent {
		d, cur := 0, id
		for parent[cur] != "" && d < 16 {
			d, cur = d+1, parent[cur]
		}
		depth[id] = d
	}
	rows, err = db.QueryContext(ctx, `SELECT id, session_id, time_created, data FROM part ORDER BY time_created, id`)
	if err != nil {
		return t, fmt.Errorf("%s: not an OpenCode database replay reads (%v)", path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, sess, data string
		var created int64
		if err := rows.Scan(&id, &sess, &created, &data); err != nil {
			return t, err
		}
		if project != "" && !within(dirs[sess], project) {
			continue
		}
		src := fmt.Sprintf("%s:part %s", path, id)
		var p struct {
			Type   string `json:"type"`
			Tool   string `json:"tool"`
			CallID string `json:"callID"`
			State  struct {
				Input map[string]any `json:"input"`
			} `json:"state"`
		}
		if err := json.Unmarshal([]byte(data), &p); err != nil {
			t.Skipped = append(t.Skipped, Skip{src, "not a JSON object"})
			continue
		}
		if p.Type != "tool" {
			continue
		}
		if p.Tool == "" {
			t.Skipped = append(t.Skipped, Skip{src, "a tool part without a tool"})
			continue
		}
		if p.State.Input == nil {
			p.State.Input = map[string]any{}
		}
		t.Calls = append(t.Calls, Call{Host: "opencode", Session: sess, ID: p.CallID, Tool: p.Tool, Args: p.State.Input,
			Cwd: dirs[sess], Depth: depth[sess], Time: time.UnixMilli(created).UTC(), Source: src})
	}
	return t, rows.Err()
}
