// Package kvindex is simdex's near-duplicate index: given a 64-bit
// fingerprint, it finds every stored fingerprint within Hamming distance k
// and the documents that carry them.
//
// It is the block-permutation ("pigeonhole") index of Manku, Jain and Das
// Sarma (WWW 2007) laid out over a narrow row/cell Store: for a layout (B, K)
// each of the C(B, B-K) tables keys rows by a choice of B-K blocks of the
// fingerprint (the prefix) and keeps the remaining bits (the residual) in the
// row, as Snappy-compressed sorted base sets written by bulk load and
// compaction, one delta cell per online insert, and tombstones for deletes.
// Any two fingerprints within distance K agree on at least B-K blocks, so they
// meet in at least one row: a lookup reads the T rows of the query (one
// multi-get), keeps the residuals within k and maps the surviving
// fingerprints to documents through the fp table. The byte layout is in
// docs/FORMAT.md.
//
// Inserts are check-and-insert: under locks on the query's T rows (any two
// near-duplicates share one of them, so racing near-duplicates serialize)
// the insert looks up near-duplicates and, in InsertIfUnique mode, stores the
// document only when there are none.
package kvindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/defaults"
	"github.com/simdex/simdex/storage"
)

// BandsMode says whether an index keeps LSH band rows (TableBands).
type BandsMode int

const (
	// BandsAuto: a new index gets bands; an existing index keeps what it
	// was created with (an index created before bands existed has none).
	BandsAuto BandsMode = iota
	// BandsOn: a new index gets bands; an existing index without them is
	// refused (ErrMetaMismatch).
	BandsOn
	// BandsOff: a new index gets no bands; an existing index with them is
	// refused (ErrMetaMismatch), since writes through this process would
	// leave its band rows stale (cmd/bulkload --bands off, like the
	// server's flag).
	BandsOff
)

// String is "auto", "on" or "off".
func (m BandsMode) String() string {
	switch m {
	case BandsAuto:
		return "auto"
	case BandsOn:
		return "on"
	case BandsOff:
		return "off"
	}
	return fmt.Sprintf("BandsMode(%d)", int(m))
}

// Config configures an Index. The zero value of each field means its default.
type Config struct {
	// Layout is the block layout (default fingerprint.DefaultLayout, B=4,
	// K=3). Fixed when the index is created.
	Layout fingerprint.Layout
	// RecipeVersion is the fingerprint recipe the stored fingerprints come
	// from (fingerprint.RecipeVersion). Fixed when the index is created;
	// fingerprints of different recipes are not comparable.
	RecipeVersion uint32
	// BucketWidth is the width of the time buckets that base sets and deltas
	// are grouped by; a retention window drops whole buckets. A whole number
	// of seconds, at least a minute. Default 30 days: coarse buckets keep
	// base sets large (better compression) for indexes that keep history;
	// news feeds with a 7-day window use 1 day. Fixed when created.
	BucketWidth time.Duration
	// MaxCellBytes is the size limit of one base-set chunk (default 64 KiB,
	// under HBase's 100 KB read-path sweet spot).
	MaxCellBytes int
	// LockStripes is the number of in-process lock stripes for
	// check-and-insert (default 65536: as many as the cross-process lock
	// names of a kind, so operations that share no name share no stripe
	// either; with fewer, two insert groups of a dozen documents would
	// wait for each other most of the time although their rows differ).
	LockStripes int
	// Locker, when set, makes check-and-insert exclusive across processes
	// sharing the store (required when several servers write one HBase);
	// nil means this process is the only writer.
	Locker storage.Locker
	// Confirm, when set, is the second check of insert-if-unique and of
	// the duplicates an insert reports. Confirm(new, keys, k) is called
	// once per new document and returns its judge: a candidate counts only
	// when judge(stored, distance) is true. keys holds the number of
	// documents in each of the new document's text-key rows as read before
	// it is stored (nil maps without text keys), overall and scoped to its
	// source (SourceOf its Attrs), from which the decision rule learns
	// which of its sentences are template; stored carries the
	// stored docs cell (its Sketch and Chars; only ID and Fingerprint when
	// the cell is missing). nil: every document within k counts. Both
	// must be cheap and must not call the Index. ConfirmEach adapts a
	// judge of pairs.
	Confirm func(newDoc Document, keys KeyCounts, k int) func(stored Document, distance int) bool
	// Bands says whether the index keeps LSH band rows (default BandsAuto:
	// new indexes do). With bands, every document inserted with a band
	// signature (Document.Bands: text documents) is also stored in its
	// band rows, and LookupDocuments and check-and-insert (with Confirm)
	// take candidates from the query's band rows as well as from its
	// index rows: near-copies beyond the simhash distance are found and
	// Confirm decides on them. Fixed when the index is created (meta).
	Bands BandsMode
	// GroupWindow, when positive, turns on group commit of single inserts
	// (Insert): concurrent inserts arriving within this window of the first
	// one are decided together by one InsertBatch (group.go), so a store
	// with costly synced writes (HBase) pays its locks and writes once per
	// group. 0 (the default) decides each insert alone, which suits the
	// embedded store, whose single insert is far cheaper than a window.
	GroupWindow time.Duration
	// GroupMax closes a group early at this many documents (default 256).
	GroupMax int
	// GroupsInFlight bounds the groups being decided at once (default 4);
	// while they run, arrivals gather in the next group. On HBase a group
	// waits on a few synced round trips, not on CPU: with more groups in
	// flight, and larger ones, single inserts on one standalone region
	// server went from about 700/s to 1,000-1,200/s at 64-128 connections
	// (benchmarks/2026-11-27-hbase-writes.md).
	GroupsInFlight int
	// CounterInterval, when positive, holds the document and fingerprint
	// counter additions of inserts and deletes in the process and writes
	// them once per interval (and at Close) instead of with each
	// operation's writes (counters.go: on HBase each addition leaves a
	// version every later one reads until a major compaction). Stats
	// includes what the process holds; other processes see it after the
	// next write, and a process killed before it loses at most one
	// interval of its additions. 0 (the default) writes them with each
	// operation, in the same atomic batch on the embedded store.
	CounterInterval time.Duration
	// WriterLease makes a new index one whose writers take turns under one
	// lease on the store (format 10, FormatWriterLease): the Locker must
	// then be a storage.WriterLeaser, and only the process holding the
	// lease writes, with no cross-process lock per operation. An existing
	// index decides for itself (SetWriterLease changes it); a process
	// configured with WriterLease refuses one whose writers share.
	WriterLease bool
	// LeaseGuest makes this process write an index whose writers take
	// turns as a guest of the lease's holder (storage.WriterLeaser's
	// LeaseGuest) instead of contending for the lease: for bulk loads and
	// offline compactions, which write beside the servers. It changes
	// nothing in an index whose writers share.
	LeaseGuest bool
	// AdoptStored makes Open take Layout and BucketWidth from the index
	// the store holds, when it holds one, instead of refusing other
	// values: the configured ones then shape a new index only (a recipe,
	// format or bands mismatch is still refused). For the processes that
	// serve, load or maintain whatever index they find.
	AdoptStored bool
	// NoCreate makes Open refuse a store that holds no index (ErrNoIndex)
	// instead of creating one: for tools that work on an existing index.
	NoCreate bool
	// Logger receives operational logs (default: discard).
	Logger *slog.Logger
	// Registerer receives the index's metrics (nil: not registered).
	Registerer prometheus.Registerer
	// SourceAttr is the document attribute that names its source (a site,
	// a mailing list, a manual's module): a document whose Attrs hold it
	// also keys its text keys scoped to that source (SourceKeyBand), so a
	// check can learn a source's own template from the counts. Fixed when
	// the index is created (meta sources): "" means the index's (for a new
	// index DefaultSourceAttr), NoSourceAttr creates one without scoped
	// rows, and an index with another is refused (ErrMetaMismatch). An
	// index without scoped rows (created so, or of format 6 or older)
	// keeps none whatever this says.
	SourceAttr string
	// SourceKeyMinDocs is the least number of documents a sentence's
	// overall text-key row must hold for a lookup naming a source to read
	// its row scoped to the source (decide.Rule.TemplateMinDocs: a
	// sentence fewer documents hold is nobody's template, whatever its
	// source's count). Default 1: every held sentence's, exact for any
	// rule.
	SourceKeyMinDocs int
}

// DefaultSourceAttr is the attribute that names a document's source in a
// new index (Config.SourceAttr).
const DefaultSourceAttr = "source"

// NoSourceAttr as Config.SourceAttr creates an index without
// source-scoped text-key rows.
const NoSourceAttr = "-"

// Defaults.
const (
	DefaultBucketWidth    = 30 * 24 * time.Hour
	DefaultMaxCellBytes   = 64 << 10
	DefaultLockStripes    = lockBuckets
	DefaultGroupMax       = 256
	DefaultGroupsInFlight = 4
)

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	defaults.Set(&c.Layout, fingerprint.DefaultLayout)
	defaults.Set(&c.BucketWidth, DefaultBucketWidth)
	defaults.Set(&c.MaxCellBytes, DefaultMaxCellBytes)
	defaults.Set(&c.LockStripes, DefaultLockStripes)
	defaults.Set(&c.GroupMax, DefaultGroupMax)
	defaults.Set(&c.GroupsInFlight, DefaultGroupsInFlight)
	defaults.Logger(&c.Logger)
	return c
}

// ErrConfig is wrapped by Config.Validate errors.
var ErrConfig = errors.New("kvindex: bad config")

// Validate reports whether c (with defaults filled) is usable.
func (c Config) Validate() error {
	c = c.withDefaults()
	if err := c.Layout.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if c.RecipeVersion == 0 {
		return fmt.Errorf("%w: RecipeVersion must be set (fingerprint.RecipeVersion)", ErrConfig)
	}
	if c.BucketWidth < time.Minute || c.BucketWidth%time.Second != 0 {
		return fmt.Errorf("%w: BucketWidth %s: want a whole number of seconds, at least 1m", ErrConfig, c.BucketWidth)
	}
	if c.MaxCellBytes < storage.MinCellBytes || c.MaxCellBytes > 10<<20 {
		return fmt.Errorf("%w: MaxCellBytes %d: want %d..10 MiB", ErrConfig, c.MaxCellBytes, storage.MinCellBytes)
	}
	if c.LockStripes < 1 || c.LockStripes > 1<<20 {
		return fmt.Errorf("%w: LockStripes %d: want 1..2^20", ErrConfig, c.LockStripes)
	}
	if c.Bands < BandsAuto || c.Bands > BandsOff {
		return fmt.Errorf("%w: Bands %d: want BandsAuto, BandsOn or BandsOff", ErrConfig, c.Bands)
	}
	if c.CounterInterval < 0 || c.CounterInterval > time.Hour {
		return fmt.Errorf("%w: CounterInterval %s: want 0..1h", ErrConfig, c.CounterInterval)
	}
	if c.GroupWindow < 0 || c.GroupWindow > time.Second {
		return fmt.Errorf("%w: GroupWindow %s: want 0..1s", ErrConfig, c.GroupWindow)
	}
	if c.GroupMax < 1 || c.GroupMax > 10000 {
		return fmt.Errorf("%w: GroupMax %d: want 1..10000", ErrConfig, c.GroupMax)
	}
	if c.GroupsInFlight < 1 || c.GroupsInFlight > 1000 {
		return fmt.Errorf("%w: GroupsInFlight %d: want 1..1000", ErrConfig, c.GroupsInFlight)
	}
	if c.SourceKeyMinDocs < 0 {
		return fmt.Errorf("%w: SourceKeyMinDocs %d < 0", ErrConfig, c.SourceKeyMinDocs)
	}
	if len(c.SourceAttr) > MaxAttrKeyBytes {
		return fmt.Errorf("%w: SourceAttr of %d bytes, at most %d", ErrConfig, len(c.SourceAttr), MaxAttrKeyBytes)
	}
	return nil
}

// Index is a near-duplicate index over a Store. It is safe for concurrent
// use. Build it with Open.
type Index struct {
	st      storage.Store
	cfg     Config
	layout  fingerprint.Layout
	perms   []fingerprint.Permuter
	bits    []int   // prefix bits per table
	cover   [][]int // cover[k]: the tables a lookup at distance k must read
	buckets storage.Buckets
	locks   *stripedLocks
	// writerLease: the index's writers take turns (format 10); leaser
	// is then the configured Locker (nil: this process is the only
	// writer), whose writer lease leaseLocker is, once asked for
	// (writeLocker; leaseMu guards it).
	writerLease bool
	leaser      storage.WriterLeaser
	leaseMu     sync.Mutex
	leaseLocker storage.Locker
	log         *slog.Logger
	m           *metrics
	grp         *grouper // nil: no group commit
	bulk        BulkWriter
	rows        RowWriter
	// bands: the index keeps band rows; text: its docs cells keep short
	// documents' text (format 3); textKeys: it keeps text-key rows (format
	// 4 with bands); compact: bare fingerprints get compact fp and docs
	// cells (format 5); longKeys: documents of any length keep text keys
	// (format 6 with bands). All from the meta row, fixed after Open.
	bands, text, textKeys, compact, longKeys bool
	// sourceAttr names the attribute whose value scopes a document's text
	// keys to its source ("": the index keeps no source-scoped rows; meta
	// sources, format 7 with bands).
	sourceAttr string
	// shardCounters: counter additions go to the CounterShards rows in
	// turn (counterSeq), and Stats sums them (format 8).
	shardCounters bool
	counterSeq    atomic.Uint64
	// counters holds counter additions between writes (CounterInterval);
	// nil writes them with each operation.
	counters *counterBuffer
	// atomic: every insert and delete is one Mutate call the store
	// applies whole or not at all, so no fp entry outlives or precedes
	// its docs cell and lookups need not check (committed).
	atomic bool
	closed atomic.Bool
}

// Meta-table rows and qualifiers. Values are text so that an HBase admin can
// read them with the shell's get.
var (
	metaRow          = []byte("simdex")
	countersRow      = []byte("counters")
	qualFormat       = []byte("format")
	qualLayout       = []byte("layout")
	qualRecipe       = []byte("recipe")
	qualBucket       = []byte("bucket")
	qualCreated      = []byte("created")
	qualDocuments    = []byte("documents")
	qualFingerprints = []byte("fingerprints")
	qualBands        = []byte("bands")
	qualTextKeys     = []byte("textkeys")
	qualSources      = []byte("sources")
)

// Open opens the index kept in st, creating its metadata when the store holds
// none (unless Config.NoCreate). An index created with another layout,
// recipe version, bucket width or format version is refused with an error
// wrapping ErrMetaMismatch that names both values; with Config.AdoptStored
// its layout and bucket width are taken instead. The Index owns st from
// then on: Close closes it (on an error, st stays the caller's).
func Open(ctx context.Context, st storage.Store, cfg Config) (*Index, error) {
	if cfg.AdoptStored || cfg.NoCreate {
		m, exists, err := ReadMeta(ctx, st)
		if err != nil {
			return nil, fmt.Errorf("kvindex: reading the index metadata: %w", err)
		}
		if !exists && cfg.NoCreate {
			return nil, ErrNoIndex
		}
		if exists && cfg.AdoptStored {
			cfg.Layout, cfg.BucketWidth = m.Layout, m.BucketWidth
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	ix := &Index{
		st:      st,
		cfg:     cfg,
		layout:  cfg.Layout,
		perms:   cfg.Layout.Permuters(),
		buckets: storage.Buckets{Width: cfg.BucketWidth},
		locks:   newStripedLocks(cfg.LockStripes),
		log:     cfg.Logger,
	}
	ix.bulk.ix, ix.rows.ix = ix, ix
	// An UnorderedMutator gets an insert's writes in two calls (writeInsert).
	if am, ok := st.(storage.AtomicMutator); ok && am.MutatesAtomically() {
		_, unordered := st.(storage.UnorderedMutator)
		ix.atomic = !unordered
	}
	for t := range ix.perms {
		ix.bits = append(ix.bits, ix.perms[t].PrefixBits)
	}
	ix.cover = coverTables(cfg.Layout)
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	ix.m = m
	if cfg.GroupWindow > 0 {
		ix.grp = newGrouper(ix, cfg.GroupWindow, cfg.GroupMax, cfg.GroupsInFlight)
	}
	if err := ix.checkMeta(ctx); err != nil {
		return nil, err
	}
	if cfg.CounterInterval > 0 {
		ix.startCounters(cfg.CounterInterval)
	}
	return ix, nil
}

// MetaValues is what the meta table records about an index.
type MetaValues struct {
	Format        int
	Layout        fingerprint.Layout
	RecipeVersion uint32
	BucketWidth   time.Duration
	// Bands is the band recipe (fingerprint.BandsVersion) of an index with
	// band rows, "" for one without.
	Bands string
	// TextKeys is the text-key recipe (fingerprint.TextKeysVersion) of an
	// index with text-key rows, "" for one without.
	TextKeys string
	// Sources is the attribute naming a document's source in an index with
	// source-scoped text-key rows (Config.SourceAttr), "" for one without.
	Sources string
}

// wantMeta is the metadata of an index with the given features: bands
// says whether it gets band rows; format is FormatVersion for a new index
// or the older format an existing one keeps (text from 3, text keys from
// 4 with bands).
func (ix *Index) wantMeta(bands bool, format int) map[string]string {
	m := map[string]string{
		string(qualFormat): strconv.Itoa(format),
		string(qualLayout): ix.layout.String(),
		string(qualRecipe): strconv.FormatUint(uint64(ix.cfg.RecipeVersion), 10),
		string(qualBucket): ix.cfg.BucketWidth.String(),
	}
	if bands {
		m[string(qualBands)] = fingerprint.BandsVersion
		switch {
		case format >= formatLongKeys:
			m[string(qualTextKeys)] = fingerprint.TextKeysVersion
		case format >= formatTextKeys:
			m[string(qualTextKeys)] = textKeysShortOnly
		}
	}
	return m
}

// newSourceAttr is the source attribute a new index records ("" for
// none).
func (c Config) newSourceAttr() string {
	switch c.SourceAttr {
	case "":
		return DefaultSourceAttr
	case NoSourceAttr:
		return ""
	}
	return c.SourceAttr
}

// TextKeys reports whether the index keeps text-key rows (format 4 with
// bands; see FormatVersion). When false, Document.Bands is cut to its LSH
// bands and queries look up no text keys.
func (ix *Index) TextKeys() bool { return ix.textKeys }

// storedBands is the part of a document's band signature the index keeps:
// none without bands, the LSH bands without text keys, and no text keys
// for a document of fingerprint.TextKeyChars or more before format 6.
func (ix *Index) storedBands(b fingerprint.Bands, chars int) fingerprint.Bands {
	switch {
	case !ix.bands:
		return nil
	case !ix.textKeys, !ix.longKeys && chars >= fingerprint.TextKeyChars:
		return b.LSH()
	}
	return b
}

// HasBands reports whether the index keeps LSH band rows (Config.Bands,
// recorded when the index was created).
func (ix *Index) HasBands() bool { return ix.bands }

// KeepsText reports whether the index's docs cells keep short documents'
// text (format 3; see FormatVersion). When false, Document.Text is not
// stored.
func (ix *Index) KeepsText() bool { return ix.text }

func (ix *Index) checkMeta(ctx context.Context) error {
	rows, err := ix.get(ctx, []storage.RowKey{{Table: storage.TableMeta, Key: metaRow}})
	if err != nil {
		return err
	}
	if len(rows[0].Cells) == 0 {
		// A new index records FormatVersion, whose writers keep their
		// locks apart (FormatWriterLease with Config.WriterLease): refused
		// before anything is written when the store cannot.
		format := FormatVersion
		if ix.cfg.WriterLease {
			format = FormatWriterLease
		}
		if err := ix.placeLocks(format); err != nil {
			return err
		}
		bands := ix.cfg.Bands != BandsOff
		want := ix.wantMeta(bands, format)
		var muts []storage.Mutation
		for _, q := range [][]byte{qualFormat, qualLayout, qualRecipe, qualBucket, qualBands, qualTextKeys} {
			if v, ok := want[string(q)]; ok {
				muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableMeta, Row: metaRow, Qualifier: q, Value: []byte(v)})
			}
		}
		if src := ix.cfg.newSourceAttr(); bands && src != "" {
			ix.sourceAttr = src
			muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableMeta, Row: metaRow, Qualifier: qualSources, Value: []byte(src)})
		}
		muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableMeta, Row: metaRow, Qualifier: qualCreated, Value: []byte(time.Now().UTC().Format(time.RFC3339))})
		if err := ix.mutate(ctx, muts); err != nil {
			return err
		}
		ix.bands, ix.text, ix.textKeys, ix.compact, ix.longKeys = bands, true, bands, true, bands
		ix.shardCounters = true
		ix.log.Info("created index", "layout", ix.layout.String(), "recipe", ix.cfg.RecipeVersion, "format", want[string(qualFormat)], "bucket", ix.cfg.BucketWidth.String(), "bands", want[string(qualBands)], "textkeys", want[string(qualTextKeys)], "sources", ix.sourceAttr)
		return nil
	}
	have := map[string]string{}
	for _, c := range rows[0].Cells {
		have[string(c.Qualifier)] = string(c.Value)
	}
	// The index decides whether it has bands; the process must accept that.
	hasBands := have[string(qualBands)] != ""
	// Indexes created before format 3 keep their format and get no text;
	// before format 4, no text keys; before format 5, no compact cells.
	format := FormatVersion
	switch have[string(qualFormat)] {
	case strconv.Itoa(formatNoBands), strconv.Itoa(formatBands):
		format = formatNoBands
		if hasBands {
			format = formatBands
		}
	case strconv.Itoa(formatText):
		format = formatText
	case strconv.Itoa(formatTextKeys):
		format = formatTextKeys
	case strconv.Itoa(formatCompact):
		format = formatCompact
	case strconv.Itoa(formatLongKeys):
		format = formatLongKeys
	case strconv.Itoa(formatSources):
		format = formatSources
	case strconv.Itoa(formatShards):
		format = formatShards
	case strconv.Itoa(FormatWriterLease):
		format = FormatWriterLease
	}
	hasText := format >= formatText
	want := ix.wantMeta(hasBands, format)
	var errs []error
	switch {
	case hasBands && ix.cfg.Bands == BandsOff:
		errs = append(errs, fmt.Errorf("bands: index has band rows (%s) but this process was configured without them (it would leave them stale)", have[string(qualBands)]))
	case !hasBands && ix.cfg.Bands == BandsOn:
		errs = append(errs, fmt.Errorf("bands: index was created without band rows but this process requires them"))
	}
	for _, q := range []string{string(qualFormat), string(qualLayout), string(qualRecipe), string(qualBucket), string(qualBands), string(qualTextKeys)} {
		if have[q] != want[q] {
			errs = append(errs, fmt.Errorf("%s: index has %q, this process wants %q", q, have[q], want[q]))
		}
	}
	// The index decides its source attribute, since every writer must
	// scope (and a delete unscope) by the same one: a process configured
	// with another is refused. An index without scoped rows keeps none.
	src := ""
	if hasBands && format >= formatSources {
		src = have[string(qualSources)]
	}
	if cs := ix.cfg.SourceAttr; cs != "" && src != "" && cs != src {
		errs = append(errs, fmt.Errorf("sources: index has %q, this process wants %q", src, cs))
	}
	if ix.cfg.WriterLease && format != FormatWriterLease && have[string(qualFormat)] == want[string(qualFormat)] {
		errs = append(errs, fmt.Errorf("writers: index has format %d, whose writers share per-operation locks, but this process was configured for a writer lease (simdexctl writer-lease on changes the index)", format))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrMetaMismatch, errors.Join(errs...))
	}
	ix.bands, ix.text, ix.textKeys, ix.compact, ix.longKeys = hasBands, hasText, hasBands && format >= formatTextKeys, format >= formatCompact, hasBands && format >= formatLongKeys
	ix.sourceAttr = src
	ix.shardCounters = format >= formatShards
	return ix.placeLocks(format)
}

// ReadMeta reads the metadata an index in st was created with, without
// opening it (for tools that adopt an existing index's settings). ok is
// false when st holds no index.
func ReadMeta(ctx context.Context, st storage.Store) (m MetaValues, ok bool, err error) {
	rows, err := st.Get(ctx, []storage.RowKey{{Table: storage.TableMeta, Key: metaRow}})
	if err != nil {
		return m, false, err
	}
	if len(rows[0].Cells) == 0 {
		return m, false, nil
	}
	for _, c := range rows[0].Cells {
		v := string(c.Value)
		switch {
		case bytes.Equal(c.Qualifier, qualFormat):
			m.Format, err = strconv.Atoi(v)
		case bytes.Equal(c.Qualifier, qualLayout):
			_, err = fmt.Sscanf(v, "B=%d,K=%d", &m.Layout.B, &m.Layout.K)
		case bytes.Equal(c.Qualifier, qualRecipe):
			var r uint64
			r, err = strconv.ParseUint(v, 10, 32)
			m.RecipeVersion = uint32(r)
		case bytes.Equal(c.Qualifier, qualBucket):
			m.BucketWidth, err = time.ParseDuration(v)
		case bytes.Equal(c.Qualifier, qualBands):
			m.Bands = v
		case bytes.Equal(c.Qualifier, qualTextKeys):
			m.TextKeys = v
		case bytes.Equal(c.Qualifier, qualSources):
			m.Sources = v
		}
		if err != nil {
			return m, false, corrupt(storage.TableMeta, metaRow, c.Qualifier, "%v", err)
		}
	}
	return m, true, nil
}

// Layout is the index's block layout.
func (ix *Index) Layout() fingerprint.Layout { return ix.layout }

// Buckets maps document times to the index's time buckets.
func (ix *Index) Buckets() storage.Buckets { return ix.buckets }

// Config is the configuration the index runs with (defaults filled).
func (ix *Index) Config() Config { return ix.cfg }

// Store is the store under the index (for compaction and tools).
func (ix *Index) Store() storage.Store { return ix.st }

// Close closes the index and its store. Calls after Close fail with ErrClosed.
func (ix *Index) Close() error {
	if ix.closed.Load() {
		return nil
	}
	// The held counter additions are written while the store is open.
	cerr := ix.stopCounters()
	if ix.closed.Swap(true) {
		return nil
	}
	return errors.Join(cerr, ix.st.Close(), ix.m.unregister())
}

// Ping reports whether the store answers (a read of the meta row).
func (ix *Index) Ping(ctx context.Context) error {
	_, err := ix.get(ctx, []storage.RowKey{{Table: storage.TableMeta, Key: metaRow}})
	return err
}

// get and mutate wrap store calls with metrics and error classification.
func (ix *Index) get(ctx context.Context, keys []storage.RowKey) ([]storage.Row, error) {
	if ix.closed.Load() {
		return nil, ErrClosed
	}
	start := time.Now()
	rows, err := ix.st.Get(ctx, keys)
	ix.m.observeStore("get", start, err)
	if err != nil {
		return nil, storeErr(err)
	}
	if len(rows) != len(keys) {
		return nil, fmt.Errorf("%w: store returned %d rows for %d keys", ErrStore, len(rows), len(keys))
	}
	return rows, nil
}

func (ix *Index) mutate(ctx context.Context, muts []storage.Mutation) error {
	if ix.closed.Load() {
		return ErrClosed
	}
	if len(muts) == 0 {
		return nil
	}
	start := time.Now()
	err := ix.st.Mutate(ctx, muts)
	ix.m.observeStore("mutate", start, err)
	if err != nil {
		return storeErr(err)
	}
	return nil
}

// storeErr makes sure a store failure matches ErrStore (or a context error).
func storeErr(err error) error {
	if errors.Is(err, ErrStore) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrStore, err)
}

// coverTables returns, for each k in 0..layout.K, a set of tables such that
// any two fingerprints within distance k share the row of one of them. At
// k = K that is every table; smaller k needs fewer rows (k = 0 needs one).
// Two fingerprints within k agree on some B-k blocks; the set must contain,
// for every choice S of B-k blocks, a table whose blocks lie inside S. The
// greedy choice below is checked against that condition.
func coverTables(l fingerprint.Layout) [][]int {
	tables := l.Tables()
	out := make([][]int, l.K+1)
	for k := 0; k <= l.K; k++ {
		var subsets [][]int
		chooseBlocks(l.B, l.B-k, func(c []int) { subsets = append(subsets, append([]int(nil), c...)) })
		covered := make([]bool, len(subsets))
		left := len(subsets)
		var chosen []int
		for left > 0 {
			best, bestN := -1, 0
			for t, tb := range tables {
				n := 0
				for i, s := range subsets {
					if !covered[i] && contains(s, tb) {
						n++
					}
				}
				if n > bestN {
					best, bestN = t, n
				}
			}
			chosen = append(chosen, best)
			for i, s := range subsets {
				if !covered[i] && contains(s, tables[best]) {
					covered[i] = true
					left--
				}
			}
		}
		sortInts(chosen)
		out[k] = chosen
	}
	return out
}

func contains(set, sub []int) bool {
	for _, x := range sub {
		found := false
		for _, y := range set {
			if x == y {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func chooseBlocks(n, k int, f func([]int)) {
	c := make([]int, 0, k)
	var rec func(start int)
	rec = func(start int) {
		if len(c) == k {
			f(c)
			return
		}
		for i := start; i < n; i++ {
			c = append(c, i)
			rec(i + 1)
			c = c[:len(c)-1]
		}
	}
	rec(0)
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// ConfirmEach adapts a judge of pairs that needs no key counts to
// Config.Confirm.
func ConfirmEach(f func(newDoc, stored Document, distance int) bool) func(Document, KeyCounts, int) func(Document, int) bool {
	return func(newDoc Document, _ KeyCounts, _ int) func(Document, int) bool {
		return func(stored Document, distance int) bool { return f(newDoc, stored, distance) }
	}
}
