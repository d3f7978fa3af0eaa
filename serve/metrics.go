package serve

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/warden-run/warden"
)

// metrics are the service's Prometheus metrics, in a registry of its own
// (two services in one process, as in tests, do not collide).
type metrics struct {
	reg         *prometheus.Registry
	decisions   *prometheus.CounterVec
	latency     prometheus.Histogram
	pending     prometheus.Gauge
	answered    *prometheus.CounterVec
	storeErrors prometheus.Counter
	hooks       *prometheus.CounterVec
	refused     *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "warden_decisions_total",
			Help: "Calls decided and recorded by this replica (decide requests and remote hooks), by outcome (allow, deny, ask), code and rule."}, []string{"outcome", "code", "rule"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "warden_decision_seconds",
			Help:    "Time to decide one call, as its audit record has it (a wait for a human included).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5, 30}}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{Name: "warden_approvals_pending",
			Help: "Approvals waiting for a human, in the store (all replicas)."}),
		answered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "warden_approvals_answered_total",
			Help: "Approvals answered through this replica, by status and scope."}, []string{"status", "scope"}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "warden_store_errors_total",
			Help: "Store operations of this replica that failed."}),
		hooks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "warden_hook_events_total",
			Help: "Hook events answered for remote hooks, by host and exit code."}, []string{"host", "exit"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "warden_requests_refused_total",
			Help: "Requests refused before their handler: expired_token, too_many (Config.MaxPerToken), body_timeout."}, []string{"reason"}),
	}
	m.reg.MustRegister(m.decisions, m.latency, m.pending, m.answered, m.storeErrors, m.hooks, m.refused,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) decided(d warden.Decision, seconds float64) {
	// A rule named after a record (approval:ID, grant:ID) counts under
	// its kind: one series per approval would grow without end.
	rule, _, _ := strings.Cut(d.Rule, ":")
	m.decisions.WithLabelValues(string(d.Decision), string(d.Code), rule).Inc()
	m.latency.Observe(seconds)
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
