package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// cookieName is the page session's cookie: the person token itself,
// HttpOnly and SameSite=Strict, set by the login form.
const cookieName = "warden_token"

// csrfHeader carries the page session's CSRF token on every POST the page
// makes (form posts carry it in the field "csrf").
const csrfHeader = "X-Warden-CSRF"

type ctxKey struct{}

// who is the token a request was authorised with.
func who(ctx context.Context) Token {
	t, _ := ctx.Value(ctxKey{}).(Token)
	return t
}

// token returns the request's token and whether it came from the cookie.
func token(r *http.Request) (tok string, cookie bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		if t, ok := strings.CutPrefix(h, "Bearer "); ok {
			return strings.TrimSpace(t), false
		}
		return "", false
	}
	if c, err := r.Cookie(cookieName); err == nil {
		return c.Value, true
	}
	return "", false
}

// sameOrigin reports whether a browser request comes from this service's
// own page: its Origin (or, lacking one, its Referer) is this host.
func sameOrigin(r *http.Request) bool {
	src := r.Header.Get("Origin")
	if src == "" {
		src = r.Header.Get("Referer")
	}
	if src == "" || src == "null" {
		return false
	}
	u, err := url.Parse(src)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// auth admits a request with a token of one of the kinds (none: any
// kind). A bearer token is a program's; the cookie is the page's, and a
// state-changing request with it must also come from this origin and
// carry the session's CSRF token: a cross-site form post has neither.
func (s *Server) auth(h http.HandlerFunc, kinds ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, cookie := token(r)
		if tok == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="warden"`)
			httpError(w, http.StatusUnauthorized, "no token: send Authorization: Bearer TOKEN (make one with `warden serve token add`), or log in on the page")
			return
		}
		t, err := s.tokens.Check(tok)
		if err != nil {
			var exp *ExpiredError
			if errors.As(err, &exp) {
				// Recorded by name: the token itself is never written.
				s.m.refused.WithLabelValues("expired_token").Inc()
				s.log.Printf("refused the expired token %q (%s, expired %s) from %s", exp.Name, exp.Kind, exp.At.Format(time.RFC3339), r.RemoteAddr)
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="warden", error="invalid_token"`)
			httpError(w, http.StatusUnauthorized, "token refused: "+err.Error())
			return
		}
		if cookie && r.Method != http.MethodGet && r.Method != http.MethodHead {
			if !sameOrigin(r) {
				httpError(w, http.StatusForbidden, "cross-site request refused: its Origin is not this service")
				return
			}
			want := s.csrfFor(tok)
			got := r.Header.Get(csrfHeader)
			if got == "" {
				got = r.URL.Query().Get("csrf")
			}
			if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
				httpError(w, http.StatusForbidden, "missing or wrong CSRF token: reload the page")
				return
			}
		}
		if len(kinds) > 0 {
			ok := false
			for _, k := range kinds {
				ok = ok || t.Kind == k
			}
			if !ok {
				httpError(w, http.StatusForbidden, article(t.Kind)+" "+t.Kind+" token may not do this: it needs "+article(kinds[0])+" "+strings.Join(kinds, " or ")+" token")
				return
			}
		}
		release, n := s.enter(t)
		if release == nil {
			s.m.refused.WithLabelValues("too_many").Inc()
			w.Header().Set("Retry-After", "1")
			httpError(w, http.StatusTooManyRequests, fmt.Sprintf("too many requests at once for the token %s: %d are under way, the limit is %d (warden serve --max-per-token); wait for an answer before sending more", t.Name, n, s.cfg.MaxPerToken))
			return
		}
		defer release()
		h(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, t)))
	}
}

// enter counts a request of a token under way and returns the function
// that ends it; nil (and the count) when the token has
// Config.MaxPerToken under way already.
func (s *Server) enter(t Token) (release func(), n int) {
	if s.cfg.MaxPerToken < 0 {
		return func() {}, 0
	}
	s.flightMu.Lock()
	defer s.flightMu.Unlock()
	if n = s.inflight[t.Hash]; n >= s.cfg.MaxPerToken {
		return nil, n
	}
	s.inflight[t.Hash] = n + 1
	return func() {
		s.flightMu.Lock()
		defer s.flightMu.Unlock()
		if s.inflight[t.Hash]--; s.inflight[t.Hash] <= 0 {
			delete(s.inflight, t.Hash)
		}
	}, n
}

// login takes a person token from the login form and sets the page
// session's cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		httpError(w, http.StatusForbidden, "cross-site login refused: its Origin is not this service")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		httpError(w, http.StatusBadRequest, "unreadable login form: "+err.Error())
		return
	}
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	t, err := s.tokens.Check(tok)
	if err != nil {
		http.Redirect(w, r, "/?login=refused", http.StatusSeeOther)
		return
	}
	if t.Kind != KindPerson {
		http.Redirect(w, r, "/?login=agent", http.StatusSeeOther)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: tok, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout ends the page session.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// article is "a" or "an" for a token kind.
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an"
	}
	return "a"
}
