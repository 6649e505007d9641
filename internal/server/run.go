package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/simdex/simdex/compaction"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/open"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/pebblestore"
)

// Run starts the service described by cfg and serves until ctx is
// cancelled (SIGTERM/SIGINT in cmd/server); then it stops accepting
// connections, drains in-flight requests for up to cfg.ShutdownTimeout and
// closes the store. Logs go to logOut. If ready is non-nil it receives the
// listening address once the server accepts requests.
func Run(ctx context.Context, cfg Config, logOut io.Writer, ready chan<- net.Addr) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	log, err := newLogger(cfg, logOut)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	start := time.Now()
	fpr, err := fingerprint.New(fingerprint.DefaultConfig())
	if err != nil {
		return fmt.Errorf("server: loading fingerprint dictionaries: %w", err)
	}
	log.Info("dictionaries loaded", "seconds", time.Since(start).Seconds(), "recipe", fingerprint.RecipeVersion)

	// An existing index keeps the layout and bucket width it was created
	// with (the flags shape new indexes only); a recipe or format mismatch
	// is still refused by kvindex.Open.
	bands, err := cfg.bandsMode()
	if err != nil {
		return err
	}
	kcfg := kvindex.Config{Layout: cfg.Layout, RecipeVersion: fingerprint.RecipeVersion, Logger: log, Registerer: reg, Confirm: cfg.judge(fpr).Confirm, Bands: bands,
		AdoptStored: true, SourceAttr: cfg.SourceAttr, SourceKeyMinDocs: cfg.Rule.TemplateMinDocs}
	if cfg.Store == "hbase" {
		// Several servers share the tables: check-and-insert takes the
		// store's cross-process lease locks (docs/ARCHITECTURE.md), and
		// groups concurrent inserts.
		kcfg.GroupWindow, kcfg.GroupMax, kcfg.GroupsInFlight = cfg.HBaseInsertGroup, cfg.HBaseInsertGroupMax, cfg.HBaseInsertGroupsInFlight
		kcfg.CounterInterval = cfg.HBaseCounterInterval
		kcfg.WriterLease = cfg.HBaseWriterLease
	}
	// Listen before the index opens: the writer lease records the URL
	// this server takes writes at, made from the listening address.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if cfg.Store == "hbase" {
		if cfg.AdvertiseURL = advertisedURL(cfg, ln.Addr()); cfg.AdvertiseURL == "" {
			cfg.AdvertiseURL = "-"
		}
	}
	ix, err := open.Index(ctx, cfg.storeConfig(log, reg), kcfg)
	if err != nil {
		return errors.Join(fmt.Errorf("server: %w", err), ln.Close())
	}
	// From here every early return closes ln through closeAll.
	closeAll := func(err error) error { return errors.Join(err, ln.Close(), ix.Close()) }
	if ix.WriterLease() {
		// Contend for the writer lease from the start, not from the first
		// write, so that /readyz says at once which server writes.
		if err := ix.Writable(ctx); err != nil {
			log.Info("writer lease: another server writes; this one answers checks and takes over when the lease is free", "reason", err)
		} else {
			log.Info("writer lease: this server writes")
		}
	}
	if err := reg.Register(newIndexCollector(ix.Stats)); err != nil {
		return closeAll(fmt.Errorf("server: %w", err))
	}
	if ix.WriterLease() {
		held := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "simdex_writer_lease_held",
			Help: "1 while this server holds the writer lease of an index whose writers take turns (it writes), 0 while another one does."},
			func() float64 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				if ix.Writable(ctx) != nil {
					return 0
				}
				return 1
			})
		if err := reg.Register(held); err != nil {
			return closeAll(fmt.Errorf("server: %w", err))
		}
	}
	if ix.Layout() != cfg.Layout {
		log.Info("using the existing index's layout", "layout", ix.Layout().String(), "flag_layout", cfg.Layout.String())
	}

	seenSvc, err := openSeen(ctx, cfg, ix, fpr, ix.Config().Locker, log, reg)
	if err != nil {
		return closeAll(err)
	}
	srv, err := New(cfg, ix, fpr, log, reg, WithSeen(seenSvc))
	if err != nil {
		return closeAll(err)
	}
	stopCompactor, err := startCompactor(ctx, cfg, ix, log, reg)
	if err != nil {
		return closeAll(err)
	}
	stopCompactor = withSeenFolder(ctx, cfg, seenSvc, log, stopCompactor)
	if len(cfg.APIKeys) == 0 {
		log.Warn("no API keys configured: write endpoints are open, so the server listens on loopback only", "addr", ln.Addr().String())
	}
	log.Info("serving", "addr", ln.Addr().String(), "store", cfg.Store, "data_dir", cfg.DataDir, "layout", ix.Layout().String())

	stopPprof, err := startPprof(cfg.PprofAddr, log)
	if err != nil {
		stopCompactor()
		return closeAll(err)
	}
	defer stopPprof()

	hs := NewHTTPServer(cfg, srv, log)
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }() // joined below on both paths
	if ready != nil {
		ready <- ln.Addr()
	}

	select {
	case err := <-serveErr:
		stopCompactor()
		srv.Close()
		return errors.Join(fmt.Errorf("server: %w", err), ix.Close())
	case <-ctx.Done():
	}
	log.Info("shutting down: draining in-flight requests", "timeout", cfg.ShutdownTimeout.String())
	srv.SetDraining()
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	shutErr := hs.Shutdown(sctx)
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		shutErr = errors.Join(shutErr, err)
	}
	stopCompactor()
	srv.Close()
	closeErr := ix.Close()
	if shutErr == nil && closeErr == nil {
		log.Info("stopped cleanly")
	}
	return errors.Join(shutErr, closeErr)
}

func newLogger(cfg Config, out io.Writer) (*slog.Logger, error) {
	lvl, err := parseLevel(cfg.LogLevel)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: lvl}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(out, opts)), nil
	}
	return slog.New(slog.NewTextHandler(out, opts)), nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(s))); err != nil {
		return 0, fmt.Errorf("log level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// startCompactor runs compaction every cfg.CompactEvery until ctx ends or
// the returned stop is called; stop waits for a run in progress to stop
// (runs are cancelled through their context and resume next time).
func startCompactor(ctx context.Context, cfg Config, ix *kvindex.Index, log *slog.Logger, reg prometheus.Registerer) (stop func(), err error) {
	if cfg.CompactEvery <= 0 {
		return func() {}, nil
	}
	m, err := compaction.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	c, err := compaction.New(ix, compaction.Config{Retention: cfg.CompactRetention, KeepStoreHistory: cfg.CompactKeepStoreHistory, Logger: log, Metrics: m})
	if err != nil {
		return nil, err
	}
	stop = every(ctx, cfg.CompactEvery, func(ctx context.Context) {
		if err := ix.Writable(ctx); err != nil {
			// An index whose writers take turns: compaction rewrites rows,
			// so only the server holding the writer lease runs it.
			log.Debug("compaction skipped: not the writer", "err", err)
			return
		}
		c.Run(ctx) // logs its own summary line and errors
	})
	log.Info("compaction timer started", "every", cfg.CompactEvery.String(), "retention", cfg.CompactRetention.String())
	return stop, nil
}

// every runs f every d in a goroutine of its own (owned by Run) until the
// returned stop, which cancels the context f gets and waits for the
// goroutine to end.
func every(ctx context.Context, d time.Duration, f func(ctx context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { // stopped by cancel, joined through done
		defer close(done)
		tk := time.NewTicker(d)
		defer tk.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
				f(ctx)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// storeConfig says which store the server opens: HBase or the embedded
// store in DataDir (made when missing), logging to log, metrics to reg.
func (c Config) storeConfig(log *slog.Logger, reg prometheus.Registerer) open.Store {
	hc := c.hbaseStoreConfig()
	hc.Logger, hc.Registerer = log, reg
	return open.Store{Kind: c.Store, DataDir: c.DataDir, MakeDir: true,
		Pebble: pebblestore.Options{Logger: log, RowCacheBytes: c.RowCacheBytes, Registerer: reg}, HBase: hc}
}

// hbaseStoreConfig is the HBase store's configuration. The lock lease is
// well above the request deadline: a lease must outlive any holder's
// request (docs/ARCHITECTURE.md, "Across processes on HBase").
func (c Config) hbaseStoreConfig() hbasestore.Config {
	hc := c.HBaseStoreConfig()
	hc.LockLease = max(30*time.Second, 6*c.RequestTimeout)
	hc.MultiInFlight = c.HBaseMultiInFlight
	if c.AdvertiseURL != "-" {
		hc.WriterURL = c.AdvertiseURL
	}
	return hc
}

// startPprof serves net/http/pprof on addr (loopback, checked by
// Validate) until the returned stop is called; stop closes the listener
// and waits for the serving goroutine.
func startPprof(addr string, log *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("server: pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ps := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { // owned by Run: stopped by ps.Close, joined through done
		defer close(done)
		_ = ps.Serve(ln)
	}()
	log.Info("pprof listening", "addr", ln.Addr().String())
	return func() { ps.Close(); <-done }, nil
}

// NewHTTPServer is the http.Server that Run serves h with: its timeouts
// bound slow clients (headers, whole requests, idle keep-alive
// connections) and its error log goes to log. Benchmarks that serve the
// handler themselves use it too, so they measure what Run serves.
func NewHTTPServer(cfg Config, h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       cfg.RequestTimeout + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
