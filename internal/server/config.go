package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/config"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/seen"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("server: bad configuration")

// Config is everything the server needs to run. DefaultConfig gives working
// values for a single machine; LoadConfig fills it from flags, SIMDEX_*
// environment variables and an optional JSON file.
type Config struct {
	// Addr is the listen address. Without API keys it must be a loopback
	// address: an unauthenticated write API is never exposed to a network.
	Addr string
	// Store names the backend: "pebble" (embedded, the default) or "hbase".
	Store string
	// DataDir is the Pebble store's directory.
	DataDir string
	// HBase is the connection to HBase, shared with the other commands:
	// HBaseZK is the ZooKeeper quorum (host:port, comma-separated),
	// required with Store "hbase"; HBaseNamespace holds the tables
	// (default "simdex"); HBaseCreateTables creates missing tables with
	// the default schema, without it a missing table refuses to start and
	// names `simdexctl schema create`.
	config.HBase
	// HBaseInsertGroup is the group-commit window of single inserts on
	// HBase (kvindex.Config.GroupWindow): concurrent inserts arriving
	// within it are decided together, paying HBase's synced lock and write
	// round trips once per group. 0 turns grouping off. The embedded store
	// never groups: its single insert costs less than a window.
	HBaseInsertGroup time.Duration
	// HBaseInsertGroupMax closes a group early at this many documents.
	HBaseInsertGroupMax int
	// HBaseInsertGroupsInFlight bounds the groups being decided at once
	// (kvindex.Config.GroupsInFlight); arrivals meanwhile join the open
	// group.
	HBaseInsertGroupsInFlight int
	// HBaseCounterInterval is how often a server on HBase writes the
	// document and fingerprint counter additions of its inserts and
	// deletes (kvindex.Config.CounterInterval; 0: with every write).
	// Another server's /v1/stats lags by up to this much, and a server
	// killed between two writes loses up to this much of its additions.
	HBaseCounterInterval time.Duration
	// HBaseWriterLease creates the index as one whose writers take turns
	// (kvindex.Config.WriterLease, index format 10): the server holding
	// the namespace's writer lease writes with no per-operation lease
	// locks, the others answer writes 503 not-writer until they take it
	// over. An existing index decides for itself (simdexctl writer-lease
	// switches it).
	HBaseWriterLease bool
	// AdvertiseURL is where the other servers send index writes while this
	// one holds the writer lease of an index whose writers take turns
	// (recorded in the lease; forward.go): "" makes it from the listening
	// address (the host name when listening on every interface), "-"
	// advertises none (the others answer writes 503 not-writer).
	AdvertiseURL string
	// HBaseMultiInFlight is how many lookups (Multi calls of gets) the
	// HBase client lets be in flight per region server before further
	// ones queue and leave together as one MultiRequest (0: the client's
	// default, -1: never coalesce; hbase.Config.MultiInFlight).
	HBaseMultiInFlight int
	// APIKeys are the bearer tokens accepted on write endpoints. Empty means
	// no authentication (loopback only).
	APIKeys []string
	// MaxBodyBytes bounds request bodies; larger bodies get 413.
	MaxBodyBytes int64
	// RequestTimeout is the deadline of each request's work, store calls included.
	RequestTimeout time.Duration
	// ShutdownTimeout bounds how long in-flight requests may drain on SIGTERM.
	ShutdownTimeout time.Duration
	// MaxBatch is the largest number of items in one batch request.
	MaxBatch int
	// MaxLimit is the largest "limit" a lookup may ask for, and the default.
	MaxLimit int
	// Layout is used when a new index is created; an existing index keeps its own.
	Layout fingerprint.Layout
	// Bands says whether the index keeps LSH band rows: "auto" (default:
	// a new index does, an existing one keeps what it was created with),
	// "on" (refuse an index without them) or "off" (a new index without;
	// refuse one with them).
	Bands string
	// SourceAttr is the document attribute that names its source (a site,
	// a list): documents with it also count their sentences per source, so
	// a source's own template (a site's footer) is learned
	// (kvindex.Config.SourceAttr). "" is the index's (a NEW index:
	// "source"); "-" creates an index without; an index with another is
	// refused.
	SourceAttr string
	// LogFormat is "text" or "json".
	LogFormat string
	// LogLevel is "debug", "info", "warn" or "error".
	LogLevel string
	// CompactEvery runs compaction (package compaction) on this interval
	// inside the server, which owns the embedded store (0: never; then run
	// `simdexctl compact` with the server stopped).
	CompactEvery time.Duration
	// CompactRetention is the retention window of those runs (0: keep all).
	CompactRetention time.Duration
	// CompactKeepStoreHistory stops those runs from asking HBase to
	// major-compact the index table after they folded rows
	// (compaction.Config.KeepStoreHistory).
	CompactKeepStoreHistory bool
	// RowCacheBytes is the embedded store's row cache budget (0: the
	// default, pebblestore.DefaultRowCacheBytes; negative: off).
	RowCacheBytes int64
	// PprofAddr, when set, serves net/http/pprof on this loopback address
	// (for profiling under load; never on a network address).
	PprofAddr string
	// Rule is the duplicate decision applied to the candidates a lookup
	// finds (package decide); the zero Rule means decide.DefaultRule().
	Rule decide.Rule
	// SeenRetention is how long per-user seen marks are kept (package seen;
	// default 30 days). The compaction timer also folds seen rows.
	SeenRetention time.Duration
	// GCPercent is the garbage collector's target percentage (GOGC) that
	// cmd/server sets for its process, unless GOGC is in the environment;
	// 0 leaves the runtime's own (100). The default is 300: the heap is
	// ~215 MB of segmentation dictionary that every collection marks, and
	// at 100 a lookup arriving during a mark waits for it (on HBase at
	// 2,000 lookups/s, p99 2.6-3.3 ms against 1.5-2.1 ms at 300, for ~310
	// MB more resident memory: docs/OPERATIONS.md).
	GCPercent int
}

// DefaultConfig returns the configuration `go run ./cmd/server` uses.
func DefaultConfig() Config {
	return Config{
		Addr:                      "127.0.0.1:8080",
		Store:                     "pebble",
		DataDir:                   "simdex-data",
		HBase:                     config.DefaultHBase(),
		HBaseInsertGroup:          time.Millisecond,
		HBaseInsertGroupMax:       kvindex.DefaultGroupMax,
		HBaseInsertGroupsInFlight: kvindex.DefaultGroupsInFlight,
		HBaseCounterInterval:      time.Second,
		MaxBodyBytes:              8 << 20,
		RequestTimeout:            5 * time.Second,
		ShutdownTimeout:           20 * time.Second,
		MaxBatch:                  1000,
		MaxLimit:                  1000,
		Layout:                    fingerprint.DefaultLayout,
		Bands:                     "auto",
		Rule:                      decide.DefaultRule(),
		LogFormat:                 "text",
		LogLevel:                  "info",
		SeenRetention:             seen.DefaultRetention,
		GCPercent:                 300,
	}
}

// Validate reports the first thing wrong with c.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
	}
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return bad("addr %q: %v", c.Addr, err)
	}
	if len(c.APIKeys) == 0 && !isLoopback(host) {
		return bad("addr %q is not a loopback address and no API keys are configured: set --api-keys (or SIMDEX_API_KEYS) to listen on a network", c.Addr)
	}
	for _, k := range c.APIKeys {
		if len(k) < 16 {
			return bad("API keys must be at least 16 characters")
		}
	}
	switch c.Store {
	case "pebble":
		if c.DataDir == "" {
			return bad("data dir is empty")
		}
	case "hbase":
		if err := c.ValidateHBase("--store hbase"); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
		if c.HBaseInsertGroup < 0 || c.HBaseInsertGroup > time.Second {
			return bad("hbase insert group %s: want 0..1s", c.HBaseInsertGroup)
		}
		if c.HBaseMultiInFlight < -1 {
			return bad("hbase multi in flight %d: want -1 (never coalesce), 0 (default) or more", c.HBaseMultiInFlight)
		}
		if c.HBaseInsertGroupMax < 1 || c.HBaseInsertGroupMax > 10000 {
			return bad("hbase insert group max %d: want 1..10000", c.HBaseInsertGroupMax)
		}
		if c.HBaseInsertGroupsInFlight < 1 || c.HBaseInsertGroupsInFlight > 1000 {
			return bad("hbase insert groups in flight %d: want 1..1000", c.HBaseInsertGroupsInFlight)
		}
		if c.HBaseCounterInterval < 0 || c.HBaseCounterInterval > time.Hour {
			return bad("hbase counter interval %s: want 0..1h", c.HBaseCounterInterval)
		}
		if err := validAdvertiseURL(c.AdvertiseURL); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
	default:
		return bad("store %q: want \"pebble\" or \"hbase\"", c.Store)
	}
	if c.MaxBodyBytes < 1024 {
		return bad("max body bytes %d: want at least 1024", c.MaxBodyBytes)
	}
	if c.RequestTimeout <= 0 || c.ShutdownTimeout <= 0 {
		return bad("timeouts must be positive")
	}
	if c.GCPercent < 0 || c.GCPercent > 10000 {
		return bad("gc percent %d: want 0..10000 (0: the runtime's default)", c.GCPercent)
	}
	if c.MaxBatch < 1 || c.MaxBatch > 100000 {
		return bad("max batch %d: want 1..100000", c.MaxBatch)
	}
	if c.MaxLimit < 1 {
		return bad("max limit %d: want >= 1", c.MaxLimit)
	}
	if _, err := c.bandsMode(); err != nil {
		return err
	}
	if err := c.Layout.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := c.Rule.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if c.CompactEvery < 0 || c.CompactRetention < 0 {
		return bad("compact-every %s, compact-retention %s: want >= 0", c.CompactEvery, c.CompactRetention)
	}
	if c.PprofAddr != "" {
		host, _, err := net.SplitHostPort(c.PprofAddr)
		if err != nil || !isLoopback(host) {
			return bad("pprof addr %q: want a loopback host:port", c.PprofAddr)
		}
	}
	if err := c.seenConfig().Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return bad("log format %q: want text or json", c.LogFormat)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ErrHelp is returned by LoadConfig when --help was asked for; the usage
// has been written.
var ErrHelp = flag.ErrHelp

// LoadConfig builds a Config from defaults, then an optional JSON file
// (--config or SIMDEX_CONFIG), then SIMDEX_* environment variables, then
// flags: each later source overrides the earlier ones (package
// internal/config). Usage goes to out.
func LoadConfig(args []string, getenv func(string) string, out io.Writer) (Config, error) {
	cfg := DefaultConfig()
	s := config.NewSet("server", ErrConfig, out, config.Usage{
		Synopsis:    []string{"server [flags]"},
		Text:        "Runs the simdex REST service.",
		FileExample: `{"data_dir": "/var/lib/simdex", "request_timeout": "2s"}`,
	})
	apiKeys := cfg.declareFlags(s.Flags())
	if err := s.Parse(args, getenv); err != nil {
		return cfg, err
	}
	if len(s.Args()) > 0 {
		return cfg, fmt.Errorf("%w: unexpected arguments %q", ErrConfig, s.Args())
	}
	cfg.APIKeys = splitKeys(*apiKeys)
	return cfg, cfg.Validate()
}

// declareFlags declares every option on fs, bound to c's fields with their
// values as defaults; --api-keys is bound to the string returned.
func (c *Config) declareFlags(fs *flag.FlagSet) (apiKeys *string) {
	apiKeys = new(string)
	*apiKeys = strings.Join(c.APIKeys, ",")
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address; must be loopback unless API keys are set")
	fs.StringVar(&c.Store, "store", c.Store, "store backend: pebble (embedded) or hbase")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "directory of the embedded Pebble store (created if missing)")
	c.HBaseFlags(fs, "with --store hbase: ", "else refuse to start")
	fs.DurationVar(&c.HBaseInsertGroup, "hbase-insert-group", c.HBaseInsertGroup, "with --store hbase: group-commit window of concurrent single inserts (0: off)")
	fs.IntVar(&c.HBaseMultiInFlight, "hbase-multi-inflight", c.HBaseMultiInFlight, "with --store hbase: lookups in flight per region server before further ones share one Multi RPC (0: default 4, -1: never coalesce)")
	fs.IntVar(&c.HBaseInsertGroupMax, "hbase-insert-group-max", c.HBaseInsertGroupMax, "with --store hbase: most documents in one insert group")
	fs.IntVar(&c.HBaseInsertGroupsInFlight, "hbase-insert-groups-in-flight", c.HBaseInsertGroupsInFlight, "with --store hbase: most insert groups decided at once (arrivals meanwhile join the open group)")
	fs.BoolVar(&c.HBaseWriterLease, "hbase-writer-lease", c.HBaseWriterLease, "with --store hbase: create the index as one whose writers take turns under one lease (one writing server at a time, no per-insert locks; see OPERATIONS.md)")
	fs.StringVar(&c.AdvertiseURL, "advertise-url", c.AdvertiseURL, "with --store hbase and a writer lease: the URL the other servers send index writes to while this one holds the lease (empty: http:// and the listening address, the host name when listening on every interface; -: none, the others answer writes 503 not-writer)")
	fs.DurationVar(&c.HBaseCounterInterval, "hbase-counter-interval", c.HBaseCounterInterval, "with --store hbase: how often the document and fingerprint counters are written (0: with every insert and delete)")
	fs.StringVar(apiKeys, "api-keys", *apiKeys, "comma-separated bearer tokens required on write endpoints (none: loopback only)")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", c.MaxBodyBytes, "largest request body; larger ones get 413")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", c.RequestTimeout, "deadline for each request's work")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "how long in-flight requests may drain on SIGTERM/SIGINT")
	fs.IntVar(&c.MaxBatch, "max-batch", c.MaxBatch, "largest number of items in a batch request")
	fs.IntVar(&c.MaxLimit, "max-limit", c.MaxLimit, "largest and default number of hits a lookup returns")
	fs.IntVar(&c.Layout.B, "layout-b", c.Layout.B, "blocks B of a NEW index's layout (an existing index keeps its own)")
	fs.IntVar(&c.Layout.K, "layout-k", c.Layout.K, "distance K of a NEW index's layout")
	fs.StringVar(&c.Bands, "bands", c.Bands, "LSH band rows (near-copies beyond distance K for texts of 200+ characters): auto (a NEW index gets them; an existing one keeps its choice), on (refuse an index without them) or off (a NEW index without them; refuse one with them)")
	fs.StringVar(&c.SourceAttr, "source-attr", c.SourceAttr, "document attribute naming its source (site, list), whose sentences are counted per source to learn its template: empty is the index's (a NEW index: \"source\"), - a NEW index without; an index recording another is refused")
	fs.DurationVar(&c.CompactEvery, "compact-every", c.CompactEvery, "run compaction on this interval inside the server (0: never)")
	fs.DurationVar(&c.CompactRetention, "compact-retention", c.CompactRetention, "retention window of the server's compaction runs (0: keep everything)")
	fs.BoolVar(&c.CompactKeepStoreHistory, "compact-keep-store-history", c.CompactKeepStoreHistory, "with --store hbase: do not ask HBase to major-compact the index table after a compaction run that folded rows (leave it to HBase's own schedule)")
	fs.Int64Var(&c.RowCacheBytes, "row-cache-bytes", c.RowCacheBytes, "memory budget of the embedded store's row cache (0: 128 MiB; negative: off)")
	fs.StringVar(&c.PprofAddr, "pprof-addr", c.PprofAddr, "serve Go's pprof profiles on this loopback address (empty: off)")
	fs.DurationVar(&c.SeenRetention, "seen-retention", c.SeenRetention, "how long per-user seen marks are kept (whole days are buckets)")
	fs.IntVar(&c.GCPercent, "gc-percent", c.GCPercent, "the Go garbage collector's GOGC for the server (a GOGC environment variable wins; 0: the runtime's 100); higher trades memory for fewer collections, each of which slows the lookups it overlaps")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log format: text or json")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log level: debug, info, warn, error")
	return apiKeys
}

func splitKeys(s string) []string {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// bandsMode maps Config.Bands to the index setting ("" is auto).
func (c Config) bandsMode() (kvindex.BandsMode, error) {
	switch c.Bands {
	case "", "auto":
		return kvindex.BandsAuto, nil
	case "on":
		return kvindex.BandsOn, nil
	case "off":
		return kvindex.BandsOff, nil
	}
	return 0, fmt.Errorf("%w: bands %q: want auto, on or off", ErrConfig, c.Bands)
}
