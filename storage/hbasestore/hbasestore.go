// Package hbasestore is the storage.Store on Apache HBase, through simdex's
// own client (package hbase). Each logical table is an HBase table
// <namespace>:index|fp|docs|meta with one column family (default "c"); a
// storage cell is the HBase cell family:qualifier of its row.
//
// Mapping of the Store operations:
//   - Get is one hbase Multi of gets per table touched (a lookup touches
//     only the index table, so it is one Multi: one request per region
//     server, not one round trip per row).
//   - Mutate coalesces the mutations per cell (within one call later
//     mutations win, which HBase itself does not promise for actions of one
//     batch: they share a timestamp and a delete marker masks a put of the
//     same timestamp), then sends one Multi per table in the order the
//     tables first appear, so the index's "index cells before fp before
//     docs" write order holds. A row deleted and written again in one call
//     costs a second Multi for that table.
//   - Add is an HBase Increment (same 8-byte big-endian layout).
//   - Mutation.Timestamp becomes the cell's timestamp, so a family TTL
//     expires whole time buckets.
//
// The families are created with NEW_VERSION_BEHAVIOR=true: without it an
// HBase delete marker masks every later put whose timestamp is not newer
// (a cell deleted and re-put within one millisecond, or re-put with its old
// bucket timestamp, would stay invisible until a major compaction).
//
// Errors wrap storage.ErrStore; context errors stay matchable.
package hbasestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/schema"
	"github.com/simdex/simdex/storage"
)

// Config configures the store.
type Config struct {
	// ZooKeeper is the HBase quorum, host:port each (required).
	ZooKeeper []string
	// ZNodeParent is HBase's zookeeper.znode.parent (default "/hbase").
	ZNodeParent string
	// Namespace holds the tables (default "simdex").
	Namespace string
	// Family is the column family of every table (default "c").
	Family string
	// CreateTables creates a missing namespace and tables as Schema
	// declares them; without it a missing table is an error
	// that says how to create it.
	CreateTables bool
	// Compression of the families created by CreateTables (default
	// "SNAPPY"; "NONE" for clusters without the codec).
	Compression string
	// TTL of the index, fp and docs families created by CreateTables (0:
	// forever); the meta table never expires.
	TTL time.Duration
	// LockLease is how long a cross-process lock lasts unless released
	// (default 30s). It must exceed any request deadline.
	LockLease time.Duration
	// MultiInFlight is passed to the HBase client (hbase.Config): lookups
	// (Multi calls of gets) in flight per region server before further
	// ones share one MultiRequest (0: the client's default).
	MultiInFlight int
	// WriterURL is where this process takes writes (a server's advertised
	// URL, e.g. "http://10.0.0.5:8080"), recorded in the writer lease
	// while it holds it, so that the processes that do not can send their
	// writes there ("": none; they refuse writes instead).
	WriterURL string
	// Logger and Registerer are passed to the HBase client.
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	// TLS and Kerberos secure the client's connections (hbase.Config's
	// TLS, loaded from these files, and Kerberos; zero and nil: none).
	TLS      hbase.TLSFiles
	Kerberos *hbase.Kerberos
}

// WithDefaults returns cfg with unset fields defaulted.
func (cfg Config) WithDefaults() Config {
	if cfg.ZNodeParent == "" {
		cfg.ZNodeParent = "/hbase"
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "simdex"
	}
	if cfg.Family == "" {
		cfg.Family = "c"
	}
	if cfg.LockLease == 0 {
		cfg.LockLease = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return cfg
}

// ErrConfig marks an invalid Config.
var ErrConfig = errors.New("hbasestore: invalid config")

// Validate reports the first invalid field of a defaulted Config.
func (cfg Config) Validate() error {
	if len(cfg.ZooKeeper) == 0 {
		return fmt.Errorf("%w: ZooKeeper quorum is empty", ErrConfig)
	}
	for _, a := range cfg.ZooKeeper {
		if !strings.Contains(a, ":") {
			return fmt.Errorf("%w: ZooKeeper address %q has no port", ErrConfig, a)
		}
	}
	if err := cfg.Schema().Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if cfg.LockLease < time.Second {
		return fmt.Errorf("%w: LockLease %v below 1s", ErrConfig, cfg.LockLease)
	}
	if _, err := cfg.TLS.Config(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if cfg.Kerberos != nil {
		if err := (hbase.Config{ZooKeeper: cfg.ZooKeeper, Kerberos: cfg.Kerberos}).WithDefaults().Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	return nil
}

// Store is a storage.Store on HBase. Safe for concurrent use.
type Store struct {
	cfg    Config
	c      *hbase.Client
	fam    []byte
	tables map[storage.Table]string // HBase table name per storage.Table
	// lockFam is the meta family of the Locker's cells: schema.LockFamily
	// when the meta table has it (hasLockFam: created by this schema, or
	// added by AddLockFamily) and the index does not say otherwise
	// (Locker.Separate), else the data family, where an index of format 8
	// or older keeps its locks (released by delete markers, as the
	// binaries that may share it do). Set before the first Lock.
	lockFam    []byte
	hasLockFam bool

	// mu protects closed, and orders bg.Add (under mu, while not closed)
	// before Close's bg.Wait.
	mu     sync.Mutex
	closed bool

	// bg tracks the background lock releases (Locker); bgCtx ends them
	// when Close has waited long enough.
	bg       sync.WaitGroup
	bgCtx    context.Context
	bgCancel context.CancelFunc
	// closing is closed when Close begins: background loops that hold
	// something (the writer lease) give it back and end.
	closing chan struct{}
	// lease is the writer lease, once WriterLease was asked for.
	lease *writerLease
	// guest is the registration as a guest of the writer lease, once
	// LeaseGuest was asked for.
	guest *leaseGuest
}

// closeGrace is how long Close waits for background lock releases before
// it cancels them (their leases then expire by themselves).
const closeGrace = 3 * time.Second

// goBackground runs fn on a goroutine owned by the store (Close waits for
// it and cancels its ctx after closeGrace); after Close it does nothing.
func (s *Store) goBackground(fn func(ctx context.Context)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		fn(s.bgCtx)
	}()
	return true
}

var _ storage.Store = (*Store)(nil)

// TableName is the HBase table name of a logical table.
func TableName(namespace string, t storage.Table) string { return namespace + ":" + t.String() }

// Schema is the declared schema (package schema) the store creates
// missing tables from.
func (cfg Config) Schema() schema.Schema {
	return schema.Schema{Namespace: cfg.Namespace, Family: cfg.Family, Compression: cfg.Compression, Retention: cfg.TTL}.WithDefaults()
}

// Open connects to HBase and checks (or, with CreateTables, creates) the
// namespace and tables.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tc, err := cfg.TLS.Config()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	c, err := hbase.New(hbase.Config{ZooKeeper: cfg.ZooKeeper, ZNodeParent: cfg.ZNodeParent, MultiInFlight: cfg.MultiInFlight, Logger: cfg.Logger, Registerer: cfg.Registerer,
		TLS: tc, Kerberos: cfg.Kerberos})
	if err != nil {
		return nil, fmt.Errorf("%w: hbase client: %w", storage.ErrStore, err)
	}
	s := &Store{cfg: cfg, c: c, fam: []byte(cfg.Family), tables: map[storage.Table]string{}}
	s.bgCtx, s.bgCancel = context.WithCancel(context.Background())
	s.closing = make(chan struct{})
	for _, t := range storage.Tables {
		s.tables[t] = TableName(cfg.Namespace, t)
	}
	if err := s.ensureTables(ctx); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return s, nil
}

// Client is the underlying HBase client (for the Locker and tools).
func (s *Store) Client() *hbase.Client { return s.c }

// Config is the store's defaulted configuration.
func (s *Store) Config() Config { return s.cfg }

func (s *Store) ensureTables(ctx context.Context) error {
	var missing []storage.Table
	for _, t := range storage.Tables {
		fams, err := s.families(ctx, t)
		switch {
		case errors.Is(err, hbase.ErrTableNotFound), errors.Is(err, hbase.ErrNamespaceNotFound):
			missing = append(missing, t)
			continue
		case err != nil:
			return s.wrap(ctx, fmt.Errorf("describe %s: %w", s.tables[t], err))
		}
		if !fams[s.cfg.Family] {
			return fmt.Errorf("%w: table %s has no family %q", storage.ErrStore, s.tables[t], s.cfg.Family)
		}
		if t == storage.TableMeta {
			s.hasLockFam = fams[schema.LockFamily]
		}
	}
	defer func() {
		s.lockFam = s.fam
		if s.hasLockFam {
			s.lockFam = []byte(schema.LockFamily)
		}
	}()
	if !slices.Contains(missing, storage.TableMeta) && !s.hasLockFam && s.cfg.CreateTables {
		// A namespace from before the lock family: adding it changes
		// nothing for an index that keeps its locks in the data family.
		if err := s.AddLockFamily(ctx); err != nil {
			return err
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if slices.Contains(missing, storage.TableMeta) {
		s.hasLockFam = true // created below with the schema's families
	}
	if !s.cfg.CreateTables {
		return fmt.Errorf("%w: table %s does not exist: create the schema with `simdexctl schema create` (or open with CreateTables)", storage.ErrStore, s.tables[missing[0]])
	}
	if _, err := schema.Create(ctx, s.c, s.cfg.Schema()); err != nil {
		return s.wrap(ctx, err)
	}
	return nil
}

// families tells which of the families the store uses table t has: the
// data family, and in the meta table the lock family. It reads the table's
// descriptor; where the cluster refuses this principal the descriptor (it
// takes CREATE or ADMIN on the table, which a server granted only READ and
// WRITE lacks), it asks each family for a row instead, which READ allows:
// HBase answers a Get of a family the table lacks with
// NoSuchColumnFamilyException.
func (s *Store) families(ctx context.Context, t storage.Table) (map[string]bool, error) {
	want := []string{s.cfg.Family}
	if t == storage.TableMeta {
		want = append(want, schema.LockFamily)
	}
	has := map[string]bool{}
	td, err := s.c.DescribeTable(ctx, s.tables[t])
	if err == nil {
		for _, f := range td.Families {
			has[f.Name] = true
		}
		return has, nil
	}
	if !errors.Is(err, hbase.ErrAccessDenied) {
		return nil, err
	}
	for _, f := range want {
		_, err := s.c.Get(ctx, s.tables[t], &hbase.Get{Row: []byte(familyProbeRow), Columns: []hbase.Column{{Family: []byte(f)}}})
		switch {
		case errors.Is(err, hbase.ErrNoSuchFamily):
		case err != nil:
			return nil, fmt.Errorf("describing it was refused (%w), and so was reading it: %w", hbase.ErrAccessDenied, err)
		default:
			has[f] = true
		}
	}
	return has, nil
}

// familyProbeRow is the row families asks for: any row will do, since
// HBase checks the family before it looks for the row.
const familyProbeRow = "simdex-family-probe"

// wrap makes err a store error, keeping ctx's error matchable when ctx has
// ended.
func (s *Store) wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w (%w)", storage.ErrStore, err, cerr)
	}
	if errors.Is(err, hbase.ErrAccessDenied) {
		return fmt.Errorf("%w (%w): %w", storage.ErrStore, storage.ErrDenied, err)
	}
	return fmt.Errorf("%w: %w", storage.ErrStore, err)
}

func (s *Store) check(ctx context.Context) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return fmt.Errorf("%w: hbasestore: closed", storage.ErrStore)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return nil
}

// Get reads whole rows: one Multi of gets per table touched.
func (s *Store) Get(ctx context.Context, keys []storage.RowKey) ([]storage.Row, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	out := make([]storage.Row, len(keys))
	// Group the keys by table in first-seen order (a lookup reads one
	// table: one group, no map).
	type group struct {
		t   storage.Table
		idx []int
	}
	var groups []group
	for i, k := range keys {
		if !k.Table.Valid() {
			return nil, fmt.Errorf("%w: hbasestore: bad table %d", storage.ErrStore, k.Table)
		}
		out[i].Key = slices.Clone(k.Key)
		if len(k.Key) == 0 {
			continue // HBase has no empty row key: such a row is always empty
		}
		g := 0
		for g < len(groups) && groups[g].t != k.Table {
			g++
		}
		if g == len(groups) {
			groups = append(groups, group{t: k.Table, idx: make([]int, 0, len(keys))})
		}
		groups[g].idx = append(groups[g].idx, i)
	}
	cols := []hbase.Column{{Family: s.fam}}
	get := func(gr group) error {
		gets := make([]hbase.Get, len(gr.idx))
		acts := make([]hbase.Action, len(gr.idx))
		for j, i := range gr.idx {
			gets[j] = hbase.Get{Row: keys[i].Key, Columns: cols}
			acts[j] = &gets[j]
		}
		t := gr.t
		res, err := s.c.Multi(ctx, s.tables[t], acts)
		if err != nil {
			return s.wrap(ctx, fmt.Errorf("get from %s: %w", s.tables[t], err))
		}
		for j, i := range gr.idx {
			if res[j].Err != nil {
				return s.wrap(ctx, fmt.Errorf("get %s row %q: %w", s.tables[t], keys[i].Key, res[j].Err))
			}
			out[i].Cells = s.cells(res[j].Result, false)
		}
		return nil
	}
	if len(groups) == 1 {
		if err := get(groups[0]); err != nil {
			return nil, err
		}
		return out, nil
	}
	// Reads have no order: the tables' Multis go at once (a lookup with
	// band rows reads the index and bands tables in one round trip, not
	// two). Each group fills its own rows of out.
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for g := range groups {
		wg.Go(func() { errs[g] = get(groups[g]) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cells converts an HBase result (sorted by qualifier, newest first) to
// storage cells, one per qualifier. Without clone the cells alias the
// result's reply buffer, which the client never reuses (a Get's rows are
// short-lived: no copy); a scan clones so that one kept row does not pin
// a whole batch of rows.
func (s *Store) cells(r *hbase.Result, clone bool) []storage.Cell {
	if r == nil || len(r.Cells) == 0 {
		return nil
	}
	out := make([]storage.Cell, 0, len(r.Cells))
	for _, c := range r.Cells {
		if string(c.Family) != s.cfg.Family || c.Type != hbase.CellPut {
			continue
		}
		if n := len(out); n > 0 && string(out[n-1].Qualifier) == string(c.Qualifier) {
			continue // an older version
		}
		q, v := c.Qualifier, c.Value
		if clone {
			q, v = slices.Clone(q), slices.Clone(v)
		}
		out = append(out, storage.Cell{Qualifier: q, Value: v})
	}
	return out
}

// cellOp is the coalesced effect of one call's mutations on one cell.
type cellOp struct {
	kind  storage.MutationKind // Put, DeleteCell or Add
	value []byte               // Put
	delta int64                // Add
	ts    time.Time
}

// rowOps is the coalesced effect on one row: an optional row delete that
// comes first, then cell operations in first-touch order.
type rowOps struct {
	table     storage.Table
	key       []byte
	deleteRow bool
	quals     []string
	cells     map[string]*cellOp
}

// Mutate applies muts: coalesced per cell, one Multi per table in the
// order the tables first appear (plus one for rows written again after a
// row delete in the same call).
func (s *Store) Mutate(ctx context.Context, muts []storage.Mutation) error {
	_, _, err := s.mutate(ctx, muts, nil)
	return err
}

// mutate is Mutate; with release (conditional lock deletes, Locker) it
// also sends them in the request of the last table's writes when that
// table is meta (only counters: nothing a lock protects), so the release
// costs no round trip of its own and is still sent only after every other
// table's writes were acknowledged. folded reports whether it did; relErrs
// are then the release items' errors (nil: applied, or the cell was no
// longer ours).
func (s *Store) mutate(ctx context.Context, muts []storage.Mutation, release []hbase.CondMutation) (folded bool, relErrs []error, err error) {
	if err := s.check(ctx); err != nil {
		return false, nil, err
	}
	tables, err := s.plan(muts)
	if err != nil {
		return false, nil, err
	}
	for n, tw := range tables {
		if len(release) > 0 && n == len(tables)-1 && tw.t == storage.TableMeta && len(tw.second) == 0 && len(tw.first) > 0 {
			relErrs, err := s.multiReleasing(ctx, tw.first, release)
			return err == nil || relErrs != nil, relErrs, err
		}
		if err := s.writeTable(ctx, tw); err != nil {
			return false, nil, err
		}
	}
	return false, nil, nil
}

// MutateUnordered applies muts as Mutate does (coalesced per cell, durable
// when it returns nil) but with no order among the tables: their Multis
// go at once, so writes to index, fp and bands cost one round trip (and
// one write-ahead-log sync wait) instead of three. Within a table a row
// deleted and written again keeps its order.
func (s *Store) MutateUnordered(ctx context.Context, muts []storage.Mutation) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	tables, err := s.plan(muts)
	if err != nil {
		return err
	}
	if len(tables) == 1 {
		return s.writeTable(ctx, tables[0])
	}
	errs := make([]error, len(tables))
	var wg sync.WaitGroup
	for n := range tables {
		wg.Go(func() { errs[n] = s.writeTable(ctx, tables[n]) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

var _ storage.UnorderedMutator = (*Store)(nil)

// tableWrites are one table's actions of a Mutate call: first, then second
// (the writes to rows that first deletes as a whole).
type tableWrites struct {
	t             storage.Table
	first, second []hbase.Action
}

// plan coalesces muts per cell and turns them into actions per table, the
// tables in the order they first appear.
func (s *Store) plan(muts []storage.Mutation) ([]tableWrites, error) {
	var tableOrder []storage.Table
	rows := map[storage.Table]map[string]*rowOps{}
	rowOrder := map[storage.Table][]*rowOps{}
	for _, m := range muts {
		if !m.Table.Valid() {
			return nil, fmt.Errorf("%w: hbasestore: bad table %d", storage.ErrStore, m.Table)
		}
		if len(m.Row) == 0 {
			return nil, fmt.Errorf("%w: hbasestore: empty row key", storage.ErrStore)
		}
		tr := rows[m.Table]
		if tr == nil {
			tr = map[string]*rowOps{}
			rows[m.Table] = tr
			tableOrder = append(tableOrder, m.Table)
		}
		r := tr[string(m.Row)]
		if r == nil {
			r = &rowOps{table: m.Table, key: m.Row, cells: map[string]*cellOp{}}
			tr[string(m.Row)] = r
			rowOrder[m.Table] = append(rowOrder[m.Table], r)
		}
		q := string(m.Qualifier)
		switch m.Kind {
		case storage.DeleteRow:
			r.deleteRow, r.quals, r.cells = true, nil, map[string]*cellOp{}
			continue
		case storage.Put, storage.DeleteCell, storage.Add:
		default:
			return nil, fmt.Errorf("%w: hbasestore: bad mutation kind %d", storage.ErrStore, m.Kind)
		}
		prev := r.cells[q]
		if prev == nil {
			r.quals = append(r.quals, q)
		}
		op := &cellOp{kind: m.Kind, value: m.Value, delta: m.Delta, ts: m.Timestamp}
		if m.Kind == storage.Add {
			switch {
			case prev != nil && prev.kind == storage.Add:
				op.delta += prev.delta
			case prev != nil && prev.kind == storage.Put:
				// A counter put then added to in one call: put the sum.
				var v int64
				if len(prev.value) == 8 {
					v = int64(be64(prev.value))
				}
				op = &cellOp{kind: storage.Put, value: put64(uint64(v + m.Delta)), ts: m.Timestamp}
			case prev != nil && prev.kind == storage.DeleteCell, prev == nil && r.deleteRow:
				op = &cellOp{kind: storage.Put, value: put64(uint64(m.Delta)), ts: m.Timestamp}
			}
		}
		r.cells[q] = op
	}
	out := make([]tableWrites, 0, len(tableOrder))
	for _, t := range tableOrder {
		tw := tableWrites{t: t}
		for _, r := range rowOrder[t] {
			writes := s.rowActions(r)
			if r.deleteRow {
				tw.first = append(tw.first, &hbase.Delete{Row: r.key, Timestamp: deleteTS})
				tw.second = append(tw.second, writes...)
			} else {
				tw.first = append(tw.first, writes...)
			}
		}
		out = append(out, tw)
	}
	return out, nil
}

// writeTable sends one table's actions: first, then second.
func (s *Store) writeTable(ctx context.Context, tw tableWrites) error {
	for _, acts := range [][]hbase.Action{tw.first, tw.second} {
		if len(acts) == 0 {
			continue
		}
		if err := s.multi(ctx, tw.t, acts); err != nil {
			return err
		}
	}
	return nil
}

// multiReleasing sends the meta table's writes acts and the lock releases
// in one CheckAndMutateMulti: the writes as its unconditional items. The
// release items' errors are returned whenever the request was answered
// (relErrs non-nil), even when a write failed.
func (s *Store) multiReleasing(ctx context.Context, acts []hbase.Action, release []hbase.CondMutation) (relErrs []error, err error) {
	t := storage.TableMeta
	items := make([]hbase.CondMutation, 0, len(acts)+len(release))
	for _, a := range acts {
		items = append(items, hbase.CondMutation{Mutation: a})
	}
	items = append(items, release...)
	_, errs, err := s.c.CheckAndMutateMulti(ctx, s.tables[t], items)
	if err != nil {
		return nil, s.wrap(ctx, fmt.Errorf("mutate %s: %w", s.tables[t], err))
	}
	relErrs = errs[len(acts):]
	if err := errors.Join(errs[:len(acts)]...); err != nil {
		return relErrs, s.wrap(ctx, fmt.Errorf("mutate %s: %w", s.tables[t], err))
	}
	return relErrs, nil
}

// deleteTS is the timestamp of every delete marker: far in the future, so
// that it covers every version, also a counter whose Increments pushed its
// timestamp past the server's clock (HBase gives an increment
// max(now, previous+1)). Under NEW_VERSION_BEHAVIOR a marker hides only
// cells written before it, so later puts stay visible.
const deleteTS = 1 << 62

// rowActions turns a row's cell operations into at most one Delete, one Put
// per timestamp and one Increment.
func (s *Store) rowActions(r *rowOps) []hbase.Action {
	var del *hbase.Delete
	var inc *hbase.Increment
	var put *hbase.Put
	for _, q := range r.quals {
		op := r.cells[q]
		switch op.kind {
		case storage.DeleteCell:
			if r.deleteRow {
				continue // already gone
			}
			if del == nil {
				del = &hbase.Delete{Row: r.key}
			}
			del.Targets = append(del.Targets, hbase.DeleteTarget{Family: s.fam, Qualifier: []byte(q), Kind: hbase.DeleteColumnVersions, Timestamp: deleteTS})
		case storage.Add:
			if inc == nil {
				inc = &hbase.Increment{Row: r.key}
			}
			inc.Columns = append(inc.Columns, hbase.IncrementColumn{Family: s.fam, Qualifier: []byte(q), Amount: op.delta})
		case storage.Put:
			if put == nil {
				put = &hbase.Put{Row: r.key}
			}
			var ts uint64
			if !op.ts.IsZero() && op.ts.UnixMilli() > 0 {
				ts = uint64(op.ts.UnixMilli())
			}
			v := op.value
			if v == nil {
				v = []byte{}
			}
			put.Values = append(put.Values, hbase.Value{Family: s.fam, Qualifier: []byte(q), Value: v, Timestamp: ts})
		}
	}
	var out []hbase.Action
	if del != nil {
		out = append(out, del)
	}
	if put != nil {
		out = append(out, put)
	}
	if inc != nil {
		out = append(out, inc)
	}
	return out
}

func (s *Store) multi(ctx context.Context, t storage.Table, acts []hbase.Action) error {
	res, err := s.c.Multi(ctx, s.tables[t], acts)
	if err != nil {
		return s.wrap(ctx, fmt.Errorf("mutate %s: %w", s.tables[t], err))
	}
	var errs []error
	for _, r := range res {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	if len(errs) > 0 {
		return s.wrap(ctx, fmt.Errorf("mutate %s: %d of %d actions failed: %w", s.tables[t], len(errs), len(acts), errors.Join(errs...)))
	}
	return nil
}

// Scan calls fn for each non-empty row of table in [start, end).
func (s *Store) Scan(ctx context.Context, table storage.Table, start, end []byte, fn func(storage.Row) error) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if !table.Valid() {
		return fmt.Errorf("%w: hbasestore: bad table %d", storage.ErrStore, table)
	}
	if end != nil && len(end) == 0 {
		return nil // [start, "") is empty
	}
	sc := s.c.Scan(s.tables[table], &hbase.Scan{StartRow: start, StopRow: end, Columns: []hbase.Column{{Family: s.fam}}, Caching: 1000})
	defer sc.Close(context.WithoutCancel(ctx))
	for {
		r, err := sc.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return s.wrap(ctx, fmt.Errorf("scan %s: %w", s.tables[table], err))
		}
		row := storage.Row{Key: slices.Clone(r.Row()), Cells: s.cells(r, true)}
		if len(row.Cells) == 0 {
			continue
		}
		if err := fn(row); err != nil {
			return err
		}
	}
}

// Close waits (up to a few seconds) for background lock releases, then
// closes the HBase client. A second Close does nothing.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.bg.Wait(); close(done) }() // ends when the releases do
	t := time.NewTimer(closeGrace)
	select {
	case <-done:
	case <-t.C:
		s.bgCancel()
		<-done
	}
	t.Stop()
	s.bgCancel()
	if err := s.c.Close(); err != nil {
		return fmt.Errorf("%w: close: %w", storage.ErrStore, err)
	}
	return nil
}

func be64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

func put64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// Drop disables and deletes the four tables of namespace and then the
// namespace (which must hold nothing else). Missing tables are skipped.
func Drop(ctx context.Context, c *hbase.Client, namespace string) error {
	return schema.Drop(ctx, c, schema.Schema{Namespace: namespace}.WithDefaults())
}
