package pebblestore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/storage"
)

// The row cache keeps whole rows (all cells of one (table, row key)) in
// memory, so that a lookup that reads rows it has read before costs a map
// probe and a copy instead of Pebble seeks through the LSM levels.
//
// Coherence. The cache is only correct because this process is the only
// writer of the database: Pebble's directory lock lets one process open it,
// and every write of that process goes through Store.Mutate (any new write
// path, such as sstable ingestion, must call invalidateAll or invalidate the
// rows it touches before it returns). The argument:
//
//   - Each shard has a generation, changed only with the shard's lock held.
//   - A writer commits its Pebble batch, then, for every row it touched, takes
//     the row's shard lock, increments the generation and deletes the row's
//     entry. Only then does Mutate return (acknowledge the write).
//   - A reader that misses notes the shard's generation g0 (under the shard
//     lock, in the same critical section as the miss), then opens a Pebble
//     iterator (a consistent snapshot) and reads the row. It installs the row
//     only if, under the shard lock, the generation is still g0.
//
// If the snapshot predates a write's commit, that write's generation
// increment either happened before the install check (the check fails: the
// possibly stale row is not installed) or happens after the install (the
// writer's delete removes the row before Mutate returns). Either way, once
// Mutate has returned, no entry older than its write remains, so every read
// that starts after a write is acknowledged sees it. A read that overlaps an
// unacknowledged write may see the row before or after it, as without the
// cache. Generations are per shard, not per row, so a write may also cancel
// the install of an unrelated row of the same shard: a lost cache fill,
// never a stale one.
//
// Eviction is sampled LRU: when a shard is over its byte budget, the least
// recently used of a few randomly chosen entries is dropped, until the new
// row fits. That keeps the hit path free of list updates (one atomic store
// of a tick).
//
// Layout for the garbage collector: a shard's index is a map from the key's
// 64-bit hash to a position in a slice of entries, and each entry holds its
// key and encoded cells in one byte slice, so the cache's hundreds of
// thousands of rows are pointer-free objects the collector marks but never
// scans (a map of strings to pointers made GC ~18% of a check's CPU). Hash
// collisions are resolved by comparing the stored key: a colliding row is
// simply not cached.

const (
	cacheShards = 64
	// entryOverhead approximates the memory of a cached row beyond its key
	// and encoded cells (entry, map slot, allocation rounding).
	entryOverhead = 64
	evictSamples  = 4
)

// rowCache is a bounded, coherent cache of encoded rows keyed by the row's
// Pebble key prefix (table | escaped row | 0x00 0x01).
type rowCache struct {
	seed   maphash.Seed
	budget int64 // bytes per shard
	shards [cacheShards]cacheShard
	m      cacheCounters
}

type cacheShard struct {
	// mu protects gen, index, entries (their data fields and the slice)
	// and bytes. Readers take it shared; an entry's data is immutable once
	// installed, so a hit decodes it after unlocking. Ticks are written
	// with atomic stores under the shared lock.
	mu      sync.RWMutex
	gen     uint64
	index   map[uint64]int32 // key hash -> position in entries
	entries []cacheEntry
	bytes   int64
	clock   atomic.Uint64 // LRU ticks; advanced on every hit and install
	rng     uint64        // eviction sampling state (under mu)
}

type cacheEntry struct {
	hash uint64
	data []byte // uvarint(len key) key encodeCells(...); never modified
	tick uint64 // the shard clock at the last use (atomic access)
}

func (e *cacheEntry) key() []byte {
	n, w := binary.Uvarint(e.data)
	return e.data[w : w+int(n)]
}

func (e *cacheEntry) blob() []byte {
	n, w := binary.Uvarint(e.data)
	return e.data[w+int(n):]
}

func newRowCache(budget int64) *rowCache {
	c := &rowCache{seed: maphash.MakeSeed(), budget: budget / cacheShards}
	for i := range c.shards {
		c.shards[i].index = make(map[uint64]int32)
		c.shards[i].rng = uint64(i)*0x9E3779B97F4A7C15 + 1
	}
	return c
}

func (c *rowCache) locate(key []byte) (*cacheShard, uint64) {
	h := maphash.Bytes(c.seed, key)
	return &c.shards[h%cacheShards], h
}

// get returns the cached cells of the row with prefix key: a fresh copy,
// or with shared the cache's own bytes (entries' data is never modified
// once installed, so they stay valid after eviction). On a miss it returns
// the shard's generation, to pass to put.
func (c *rowCache) get(key []byte, shared bool) (cells []storage.Cell, ok bool, gen uint64) {
	sh, h := c.locate(key)
	var blob []byte
	sh.mu.RLock()
	if i, found := sh.index[h]; found {
		if e := &sh.entries[i]; bytes.Equal(e.key(), key) {
			blob = e.blob()
			atomic.StoreUint64(&e.tick, sh.clock.Add(1))
		}
	}
	gen = sh.gen
	sh.mu.RUnlock()
	if blob == nil {
		c.m.misses.Add(1)
		return nil, false, gen
	}
	c.m.hits.Add(1)
	cells, err := decodeCells(blob, shared)
	if err != nil { // cannot happen: blobs are only made by encodeCells
		c.m.misses.Add(1)
		return nil, false, gen
	}
	return cells, true, gen
}

// put installs the row read from a snapshot taken after get returned gen,
// unless a write touched the shard since (see the coherence argument above).
func (c *rowCache) put(key []byte, cells []storage.Cell, gen uint64) {
	data := binary.AppendUvarint(make([]byte, 0, cellsSize(cells)+len(key)+binary.MaxVarintLen64), uint64(len(key)))
	data = append(data, key...)
	data = appendCells(data, cells)
	cost := int64(len(data)) + entryOverhead
	if cost > c.budget/4 {
		return // one huge row must not flush the shard
	}
	sh, h := c.locate(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.gen != gen {
		c.m.raced.Add(1)
		return
	}
	if _, found := sh.index[h]; found {
		// The same row installed by another reader of the same generation,
		// or a hash collision: keep what is there.
		return
	}
	for sh.bytes+cost > c.budget && len(sh.entries) > 0 {
		c.evictOne(sh)
	}
	sh.index[h] = int32(len(sh.entries))
	sh.entries = append(sh.entries, cacheEntry{hash: h, data: data, tick: sh.clock.Add(1)})
	sh.bytes += cost
	c.m.bytes.Add(cost)
	c.m.entries.Add(1)
}

// evictOne drops the least recently used of a few sampled entries. sh.mu is
// held.
func (c *rowCache) evictOne(sh *cacheShard) {
	victim := -1
	var oldest uint64
	for range evictSamples {
		// xorshift64: cheap, and only needs to spread the samples.
		sh.rng ^= sh.rng << 13
		sh.rng ^= sh.rng >> 7
		sh.rng ^= sh.rng << 17
		i := int(sh.rng % uint64(len(sh.entries)))
		if t := atomic.LoadUint64(&sh.entries[i].tick); victim < 0 || t < oldest {
			victim, oldest = i, t
		}
	}
	c.removeAt(sh, victim)
	c.m.evictions.Add(1)
}

// removeAt drops entry i, moving the last entry into its place. sh.mu is
// held exclusively.
func (c *rowCache) removeAt(sh *cacheShard, i int) {
	cost := int64(len(sh.entries[i].data)) + entryOverhead
	delete(sh.index, sh.entries[i].hash)
	last := len(sh.entries) - 1
	if i != last {
		sh.entries[i] = sh.entries[last]
		sh.index[sh.entries[i].hash] = int32(i)
	}
	sh.entries[last] = cacheEntry{} // drop the reference to the data
	sh.entries = sh.entries[:last]
	sh.bytes -= cost
	c.m.bytes.Add(-cost)
	c.m.entries.Add(-1)
}

// invalidate is called by a writer after its batch is committed, for each
// row the batch touched, before the write is acknowledged.
func (c *rowCache) invalidate(key []byte) {
	sh, h := c.locate(key)
	sh.mu.Lock()
	sh.gen++
	if i, found := sh.index[h]; found && bytes.Equal(sh.entries[i].key(), key) {
		c.removeAt(sh, int(i))
	}
	sh.mu.Unlock()
}

// invalidateAll empties the cache and cancels every fill in flight (for
// write paths that do not name their rows).
func (c *rowCache) invalidateAll() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		sh.gen++
		for len(sh.entries) > 0 {
			c.removeAt(sh, len(sh.entries)-1)
		}
		sh.mu.Unlock()
	}
}

// encodeCells lays out a row's cells as
//
//	uvarint(cell count) { uvarint(len q) q uvarint(len v) v }...
//
// (memory only; never persisted).
func encodeCells(cells []storage.Cell) []byte {
	return appendCells(make([]byte, 0, cellsSize(cells)), cells)
}

// cellsSize bounds the length of encodeCells(cells).
func cellsSize(cells []storage.Cell) int {
	n := binary.MaxVarintLen64
	for _, c := range cells {
		n += 2*binary.MaxVarintLen64 + len(c.Qualifier) + len(c.Value)
	}
	return n
}

func appendCells(b []byte, cells []storage.Cell) []byte {
	b = binary.AppendUvarint(b, uint64(len(cells)))
	for _, c := range cells {
		b = binary.AppendUvarint(b, uint64(len(c.Qualifier)))
		b = append(b, c.Qualifier...)
		b = binary.AppendUvarint(b, uint64(len(c.Value)))
		b = append(b, c.Value...)
	}
	return b
}

var errBadBlob = errors.New("pebblestore: bad cached row")

// decodeCells returns the cells of blob in newly allocated memory (one copy
// of the blob that the cells point into, and the cell slice), or with
// shared, cells that point into blob itself.
func decodeCells(blob []byte, shared bool) ([]storage.Cell, error) {
	n, w := binary.Uvarint(blob)
	if w <= 0 || n > uint64(len(blob)) {
		return nil, errBadBlob
	}
	if n == 0 {
		return nil, nil
	}
	buf := blob[w:]
	if !shared {
		buf = append([]byte(nil), buf...)
	}
	cells := make([]storage.Cell, n)
	field := func() ([]byte, error) {
		l, w := binary.Uvarint(buf)
		if w <= 0 || l > uint64(len(buf)-w) {
			return nil, errBadBlob
		}
		f := buf[w : w+int(l) : w+int(l)]
		buf = buf[w+int(l):]
		return f, nil
	}
	for i := range cells {
		q, err := field()
		if err != nil {
			return nil, err
		}
		v, err := field()
		if err != nil {
			return nil, err
		}
		cells[i] = storage.Cell{Qualifier: q, Value: v}
	}
	if len(buf) != 0 {
		return nil, errBadBlob
	}
	return cells, nil
}

// CacheStats is a snapshot of the row cache's counters.
type CacheStats struct {
	Hits, Misses, Evictions, Raced uint64
	Entries, Bytes                 int64
	// Budget is the configured size in bytes (0: the cache is off).
	Budget int64
}

// cacheCounters count what the row cache does; read by Stats and by the
// Prometheus collectors.
type cacheCounters struct {
	hits, misses, evictions, raced atomic.Uint64
	entries, bytes                 atomic.Int64
}

func (m *cacheCounters) register(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	counter := func(name, help string, v *atomic.Uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "simdex_pebble_row_cache_" + name, Help: help},
			func() float64 { return float64(v.Load()) })
	}
	gauge := func(name, help string, v *atomic.Int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "simdex_pebble_row_cache_" + name, Help: help},
			func() float64 { return float64(v.Load()) })
	}
	for _, c := range []prometheus.Collector{
		counter("hits_total", "Row reads answered by the embedded store's row cache.", &m.hits),
		counter("misses_total", "Row reads that went to Pebble.", &m.misses),
		counter("evictions_total", "Rows dropped from the row cache to stay in its byte budget.", &m.evictions),
		counter("fills_cancelled_total", "Rows read from Pebble but not cached because a write touched their cache shard meanwhile.", &m.raced),
		gauge("entries", "Rows in the row cache.", &m.entries),
		gauge("bytes", "Approximate memory held by the row cache.", &m.bytes),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

func (c *rowCache) stats() CacheStats {
	return CacheStats{
		Hits: c.m.hits.Load(), Misses: c.m.misses.Load(), Evictions: c.m.evictions.Load(), Raced: c.m.raced.Load(),
		Entries: c.m.entries.Load(), Bytes: c.m.bytes.Load(), Budget: c.budget * cacheShards,
	}
}
