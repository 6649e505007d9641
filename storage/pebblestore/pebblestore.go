// Package pebblestore is the embedded storage.Store: the index's logical
// tables as key ranges of one Pebble database in a local directory. It is
// simdex's default backend.
//
// Key layout (docs/FORMAT.md, "Embedded store"): one Pebble key per cell,
//
//	table id (1 byte) | escaped row key | 0x00 0x01 | qualifier
//
// where escaping replaces each 0x00 byte of the row key with 0x00 0xFF, so
// that Pebble's bytewise order is the order of (table, row, qualifier) and a
// row's cells are one contiguous range. Counters (storage.Add) are Pebble
// merge operands summed by the "simdex.add.v1" merger.
//
// Rows are Pebble "prefixes": the comparer's Split ends a key's prefix after
// the row terminator, sstables carry bloom filters of those prefixes, and
// Get reads each row with SeekPrefixGE, so a row that is absent from an
// sstable costs a filter probe instead of a seek (split.go).
package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/storage"
)

// Options configure the store.
type Options struct {
	// Logger receives Pebble's own log lines (default: discard).
	Logger *slog.Logger
	// CacheBytes is the block cache size (default 256 MiB).
	CacheBytes int64
	// NoSync skips the fsync of each write batch. Only for bulk builds that
	// can be redone (benchmarks, tests of other things): an acknowledged
	// write may then be lost by a machine crash.
	NoSync bool
	// Bulk tunes the store for a bulk writer (cmd/bulkload) that calls
	// Flush at its checkpoints and redoes everything after the last one
	// when restarted: a 64 MiB memtable, looser level-0 limits (fewer
	// write stalls, more compaction left for later) and no write-ahead
	// log, so writes since the last Flush are lost by a crash. Never for a
	// serving index. Implies NoSync.
	Bulk bool
	// RowCacheBytes is the memory budget of the row cache, which keeps
	// whole rows read by Get so that repeated lookups skip Pebble's seeks
	// (rowcache.go has the coherence argument). 0 means the default, 128
	// MiB; negative turns the cache off. Bulk stores never cache.
	RowCacheBytes int64
	// Registerer receives the row cache's metrics (nil: not registered).
	Registerer prometheus.Registerer
	// MemTableBytes is the size of Pebble's memtable (default
	// DefaultMemTableBytes; Bulk stores use 64 MiB). A write batch of
	// half of it or more is applied by Pebble as a memtable of its own
	// and flushed at once: with the default of Pebble (4 MiB), one batch
	// insert of 250 text documents (~9,500 cells with their band cells)
	// forced a flush, an L0 file and write stalls per batch.
	MemTableBytes int64
}

// DefaultMemTableBytes is the memtable size of a serving store: at most
// two memtables (Pebble's stop-writes threshold) are held, 64 MiB.
const DefaultMemTableBytes = 32 << 20

// DefaultRowCacheBytes is the row cache's default budget: at the default
// layout it holds every index row of about 10^6 online-inserted documents.
const DefaultRowCacheBytes = 128 << 20

// Store is a storage.Store on Pebble.
type Store struct {
	// mu protects db against use after Close: operations hold it shared,
	// Close holds it exclusively (Pebble panics on a closed DB).
	mu     sync.RWMutex
	db     *pebble.DB
	cache  *pebble.Cache
	wo     *pebble.WriteOptions
	closed bool
	dir    string
	bulk   bool // no WAL: Close flushes the memtable first
	// rows caches whole rows for Get (nil: off). Every write must
	// invalidate the rows it touches after committing and before
	// returning; Mutate does.
	rows *rowCache
}

var _ storage.Store = (*Store)(nil)

// Open opens (creating if needed) the store in dir.
func Open(dir string, opt Options) (*Store, error) {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opt.CacheBytes == 0 {
		opt.CacheBytes = 256 << 20
	}
	cache := pebble.NewCache(opt.CacheBytes)
	po := &pebble.Options{
		Cache:  cache,
		Logger: pebbleLogger{opt.Logger},
		Merger: &pebble.Merger{Name: "simdex.add.v1", Merge: newAdder},
	}
	setTableOptions(po)
	if opt.MemTableBytes <= 0 {
		opt.MemTableBytes = DefaultMemTableBytes
	}
	po.MemTableSize = uint64(opt.MemTableBytes)
	if opt.Bulk {
		opt.NoSync = true
		po.MemTableSize = 64 << 20
		po.MemTableStopWritesThreshold = 4
		po.L0CompactionThreshold = 8
		po.L0StopWritesThreshold = 64
		po.DisableWAL = true
	}
	db, err := pebble.Open(dir, po)
	cache.Unref() // the DB holds its own reference
	if err != nil {
		return nil, fmt.Errorf("%w: open %s: %w", storage.ErrStore, dir, err)
	}
	wo := pebble.Sync
	if opt.NoSync {
		wo = pebble.NoSync
	}
	s := &Store{db: db, wo: wo, dir: dir, bulk: opt.Bulk}
	if budget := opt.RowCacheBytes; budget >= 0 && !opt.Bulk {
		if budget == 0 {
			budget = DefaultRowCacheBytes
		}
		s.rows = newRowCache(budget)
		if err := s.rows.m.register(opt.Registerer); err != nil {
			return nil, errors.Join(fmt.Errorf("pebblestore: metrics: %w", err), db.Close())
		}
	}
	return s, nil
}

// Dir is the directory of the store.
func (s *Store) Dir() string { return s.dir }

// CacheStats reports the row cache's counters (all zero when it is off).
func (s *Store) CacheStats() CacheStats {
	if s.rows == nil {
		return CacheStats{}
	}
	return s.rows.stats()
}

// DB exposes the Pebble database (for metrics and disk-usage reports). It
// must not be written through: writes that bypass Mutate would leave the
// row cache stale.
func (s *Store) DB() *pebble.DB { return s.db }

func (s *Store) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return fmt.Errorf("%w: store closed", storage.ErrStore)
	}
	return nil
}

// rowPrefix appends table | escaped row | 0x00 0x01 to dst.
func rowPrefix(dst []byte, t storage.Table, row []byte) []byte {
	dst = append(dst, byte(t))
	dst = escape(dst, row)
	return append(dst, 0x00, 0x01)
}

// escape appends row with every 0x00 written as 0x00 0xFF. Rows rarely
// hold a zero byte (ids never, a random fingerprint one time in 32), so
// it copies the runs between zeros whole: a loop over single bytes was
// 0.36 s of a 10^7 bulk load's CPU.
func escape(dst, row []byte) []byte {
	for {
		i := bytes.IndexByte(row, 0)
		if i < 0 {
			return append(dst, row...)
		}
		dst = append(dst, row[:i+1]...)
		dst = append(dst, 0xFF)
		row = row[i+1:]
	}
}

// splitKey decodes a Pebble key of table t into row and qualifier.
func splitKey(k []byte) (row, qual []byte, err error) {
	if len(k) < 1 {
		return nil, nil, errors.New("empty key")
	}
	row = make([]byte, 0, len(k))
	for i := 1; i < len(k); i++ {
		if k[i] != 0 {
			row = append(row, k[i])
			continue
		}
		if i+1 >= len(k) {
			return nil, nil, fmt.Errorf("key %x: truncated escape", k)
		}
		switch k[i+1] {
		case 0xFF:
			row = append(row, 0)
			i++
		case 0x01:
			return row, k[i+2:], nil
		default:
			return nil, nil, fmt.Errorf("key %x: bad escape", k)
		}
	}
	return nil, nil, fmt.Errorf("key %x: no row terminator", k)
}

// Get implements storage.Store. Rows in the row cache are answered from
// it; the others are read with one Pebble iterator, in key order, each with
// a prefix seek (so sstables whose filter rules the row out are skipped),
// and cached when they have cells or are index rows. Other absent rows are
// not cached (an insert reads the absent fp and docs rows of new documents
// once: caching them would only evict), while an absent index row is read
// by every lookup whose permuted prefix falls on it (a bounded set of
// T x 2^prefix rows, ~20% of them absent at 10^5 documents; not caching them
// cost check by fingerprint ~15% more server CPU). Band rows bypass the
// cache: a check reads 32 band rows with random keys,
// nearly all absent and the rest tiny, rarely read again; caching them
// would evict the hot index rows, and the filters answer them cheaply.
func (s *Store) Get(ctx context.Context, keys []storage.RowKey) ([]storage.Row, error) {
	return s.get(ctx, keys, false)
}

// GetShared is Get for readers that never modify what they read: the cells
// of rows served from the row cache are the cache's own immutable bytes,
// shared with other readers, instead of a copy. Why: a seen filter reads a
// ~5 KB row per request only to decode it, and the copy was a third of the
// bytes the request allocated.
func (s *Store) GetShared(ctx context.Context, keys []storage.RowKey) ([]storage.Row, error) {
	return s.get(ctx, keys, true)
}

func (s *Store) get(ctx context.Context, keys []storage.RowKey, shared bool) ([]storage.Row, error) {
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	rows := make([]storage.Row, len(keys))
	prefixes := make([][]byte, len(keys))
	gens := make([]uint64, len(keys))
	order := make([]int, 0, len(keys)) // the rows to read from Pebble
	// One buffer for the returned row keys and one for the Pebble
	// prefixes (at most twice the row key when escaped, plus table byte
	// and terminator) instead of two allocations per row.
	n := 0
	for _, k := range keys {
		n += len(k.Key)
	}
	keyBuf := make([]byte, 0, n)
	prefixBuf := make([]byte, 0, 2*n+3*len(keys))
	for i, k := range keys {
		if !k.Table.Valid() {
			return nil, fmt.Errorf("pebblestore: unknown table %d", k.Table)
		}
		keyBuf = append(keyBuf, k.Key...)
		rows[i].Key = keyBuf[len(keyBuf)-len(k.Key) : len(keyBuf) : len(keyBuf)]
		start := len(prefixBuf)
		prefixBuf = rowPrefix(prefixBuf, k.Table, k.Key)
		prefixes[i] = prefixBuf[start:len(prefixBuf):len(prefixBuf)]
		if s.rows != nil && k.Table != storage.TableBands {
			cells, ok, gen := s.rows.get(prefixes[i], shared)
			if ok {
				rows[i].Cells = cells
				continue
			}
			gens[i] = gen // noted before the iterator's snapshot
		}
		order = append(order, i)
	}
	if len(order) == 0 {
		return rows, nil
	}
	// UseL6Filters: the bottom level holds most of the data, and the rows
	// most likely to be absent (band rows) are absent there too.
	it, err := s.db.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", storage.ErrStore, err)
	}
	defer it.Close()
	// Seek the rows in key order with one unbounded iterator: forward seeks
	// let Pebble reuse its position, and no SetBounds per row. The row
	// prefix is exactly a Split prefix (split.go), so SeekPrefixGE consults
	// each sstable's filter and stops at the row's end.
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(prefixes[a], prefixes[b]) })
	// A row's qualifiers and values are copied into one arena (ends holds
	// where each qualifier and value ends in it), and its cells are made
	// once at their number: three allocations or so per row instead of
	// two per cell (a seen row has ~30 cells, an index row a few).
	var ends []int
	sp := arenaPool.Get().(*[]byte)
	defer arenaPool.Put(sp)
	for n, i := range order {
		lo := prefixes[i]
		if n > 0 && bytes.Equal(lo, prefixes[order[n-1]]) {
			rows[i].Cells = slices.Clone(rows[order[n-1]].Cells)
			continue
		}
		arena := (*sp)[:0]
		ends = ends[:0]
		for ok := it.SeekPrefixGE(lo); ok && bytes.HasPrefix(it.Key(), lo); ok = it.Next() {
			v, err := it.ValueAndErr()
			if err != nil {
				return nil, fmt.Errorf("%w: %w", storage.ErrStore, err)
			}
			arena = append(arena, it.Key()[len(lo):]...)
			ends = append(ends, len(arena))
			arena = append(arena, v...)
			ends = append(ends, len(arena))
		}
		if err := it.Error(); err != nil {
			return nil, fmt.Errorf("%w: %w", storage.ErrStore, err)
		}
		if cap(arena) <= maxPooledArena {
			*sp = arena
		}
		if len(ends) > 0 {
			// The row's bytes in memory of their exact size (the pooled
			// arena grows by doubling). Full slice expressions: appending
			// to one cell's bytes cannot overwrite the next.
			arena = slices.Clone(arena)
			cells := make([]storage.Cell, len(ends)/2)
			start := 0
			for k := range cells {
				q, v := ends[2*k], ends[2*k+1]
				cells[k] = storage.Cell{Qualifier: arena[start:q:q], Value: arena[q:v:v]}
				start = v
			}
			rows[i].Cells = cells
		}
		if s.rows != nil && (len(rows[i].Cells) > 0 || keys[i].Table == storage.TableIndex) && keys[i].Table != storage.TableBands {
			s.rows.put(lo, rows[i].Cells, gens[i])
		}
	}
	return rows, nil
}

// arenaPool holds Get's scratch arenas (a row's cells are gathered in one
// before they are copied out at their size).
var arenaPool = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// maxPooledArena bounds the arena memory the pool keeps (one huge row must
// not pin its size).
const maxPooledArena = 1 << 20

// Mutate implements storage.Store: one Pebble batch, applied atomically and
// synced before it returns.
// MutatesAtomically implements storage.AtomicMutator: Mutate writes one
// Pebble batch, which a crash leaves whole or absent.
func (s *Store) MutatesAtomically() bool { return true }

func (s *Store) Mutate(ctx context.Context, muts []storage.Mutation) error {
	if err := s.acquire(ctx); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	b := s.db.NewBatch()
	defer b.Close()
	var key []byte
	for _, m := range muts {
		if !m.Table.Valid() {
			return fmt.Errorf("pebblestore: unknown table %d", m.Table)
		}
		key = rowPrefix(key[:0], m.Table, m.Row)
		var err error
		switch m.Kind {
		case storage.Put:
			err = b.Set(append(key, m.Qualifier...), m.Value, nil)
		case storage.DeleteCell:
			err = b.Delete(append(key, m.Qualifier...), nil)
		case storage.DeleteRow:
			hi := append([]byte(nil), key...)
			hi[len(hi)-1] = 0x02
			err = b.DeleteRange(key, hi, nil)
		case storage.Add:
			var v [8]byte
			binary.BigEndian.PutUint64(v[:], uint64(m.Delta))
			err = b.Merge(append(key, m.Qualifier...), v[:], nil)
		default:
			return fmt.Errorf("pebblestore: unknown mutation kind %d", m.Kind)
		}
		if err != nil {
			return fmt.Errorf("%w: %w", storage.ErrStore, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.rows != nil {
		// After the commit (whatever its outcome) and before returning:
		// the coherence argument in rowcache.go.
		defer func() {
			for _, m := range muts {
				key = rowPrefix(key[:0], m.Table, m.Row)
				s.rows.invalidate(key)
			}
		}()
	}
	if err := b.Commit(s.wo); err != nil {
		return fmt.Errorf("%w: %w", storage.ErrStore, err)
	}
	return nil
}

// Scan implements storage.Store.
func (s *Store) Scan(ctx context.Context, t storage.Table, start, end []byte, fn func(storage.Row) error) error {
	if err := s.acquire(ctx); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	if !t.Valid() {
		return fmt.Errorf("pebblestore: unknown table %d", t)
	}
	lo := escape([]byte{byte(t)}, start)
	hi := []byte{byte(t) + 1}
	if end != nil {
		hi = escape([]byte{byte(t)}, end)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return fmt.Errorf("%w: %w", storage.ErrStore, err)
	}
	defer it.Close()
	var cur storage.Row
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		row, qual, err := splitKey(it.Key())
		if err != nil {
			return fmt.Errorf("%w: %w", storage.ErrStore, err)
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("%w: %w", storage.ErrStore, err)
		}
		if cur.Key != nil && !bytes.Equal(cur.Key, row) {
			if err := fn(cur); err != nil {
				return err
			}
			cur = storage.Row{}
		}
		if cur.Key == nil {
			cur.Key = row
		}
		cur.Cells = append(cur.Cells, storage.Cell{Qualifier: append([]byte(nil), qual...), Value: append([]byte(nil), v...)})
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("%w: %w", storage.ErrStore, err)
	}
	if cur.Key != nil {
		return fn(cur)
	}
	return nil
}

// Flush forces the memtable to disk (for disk-usage measurements).
func (s *Store) Flush() error {
	if err := s.acquire(context.Background()); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	return s.db.Flush()
}

// Close implements storage.Store.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var flushErr error
	if s.bulk {
		flushErr = s.db.Flush() // without a WAL, unflushed writes would be lost
	}
	if err := errors.Join(flushErr, s.db.Close()); err != nil {
		return fmt.Errorf("%w: close: %w", storage.ErrStore, err)
	}
	return nil
}

// adder sums 8-byte big-endian counter operands.
type adder struct {
	sum int64
}

func newAdder(_, value []byte) (pebble.ValueMerger, error) {
	a := &adder{}
	return a, a.add(value)
}

func (a *adder) add(v []byte) error {
	if len(v) != 8 {
		return fmt.Errorf("pebblestore: counter operand of %d bytes", len(v))
	}
	a.sum += int64(binary.BigEndian.Uint64(v))
	return nil
}

func (a *adder) MergeNewer(v []byte) error { return a.add(v) }
func (a *adder) MergeOlder(v []byte) error { return a.add(v) }
func (a *adder) Finish(bool) ([]byte, io.Closer, error) {
	out := make([]byte, 8)
	binary.BigEndian.PutUint64(out, uint64(a.sum))
	return out, nil, nil
}

// pebbleLogger sends Pebble's log lines to slog.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}
func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
	panic(fmt.Sprintf(format, args...))
}
