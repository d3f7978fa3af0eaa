// Package web is the approvals page of `warden serve`: plain HTML, CSS and
// a little JavaScript, embedded in the binary, with no build step. The
// page talks to the service's JSON API (package serve) with the person
// token in an HttpOnly, SameSite=Strict cookie and a CSRF token on every
// POST, and follows the server-sent event stream for live updates.
//
// Stability: this package is internal to warden in spirit: it serves
// package serve alone, and changes with it in any release.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var files embed.FS

// Handler serves the page and its files. No inline script or style: the
// Content-Security-Policy allows this origin's files only.
func Handler() http.Handler {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err)
	}
	fsrv := http.FileServer(http.FS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		w.Header().Set("Cache-Control", "no-cache")
		if r.URL.Path == "/favicon.ico" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		fsrv.ServeHTTP(w, r)
	})
}
