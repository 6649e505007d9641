package kvindex

import (
	"cmp"
	"context"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/storage"
)

// LookupOptions narrow a lookup.
type LookupOptions struct {
	// K is the largest distance returned, 0..Layout().K.
	K int
	// Since and Until bound the documents' times: Since <= Time < Until. A
	// zero value leaves that side open.
	Since, Until time.Time
	// Limit caps the number of hits (0: no limit); the first Limit hits in
	// result order are kept and Truncated is set.
	Limit int
	// ExactHash, when not zero, marks hits at distance 0 whose stored exact
	// hash equals it as Exact.
	ExactHash uint64
}

// Hit is one stored document near the query.
type Hit struct {
	ID          string
	Fingerprint fingerprint.Fingerprint
	Distance    int
	Time        time.Time
	// Exact: distance 0 and the same exact-content hash (both non-zero).
	Exact bool
}

// LookupResult is the answer to one lookup.
type LookupResult struct {
	// Hits sorted by distance, then time, then id; a document found through
	// several tables appears once.
	Hits []Hit
	// Candidates is the number of residuals examined (decoded base-set
	// entries plus delta cells) over the rows read.
	Candidates int
	// Truncated is set when Limit cut the hits.
	Truncated bool
}

// hitLess orders hits by distance, then time, then id.
func hitCmp(a, b Hit) int {
	if c := cmp.Compare(a.Distance, b.Distance); c != 0 {
		return c
	}
	if c := a.Time.Compare(b.Time); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// earlier orders documents by (time, id): the earlier one is the original.
func earlier(a, b Hit) bool {
	if c := a.Time.Compare(b.Time); c != 0 {
		return c < 0
	}
	return a.ID < b.ID
}

func (ix *Index) checkK(k int) error {
	if k < 0 || k > ix.layout.K {
		return fmt.Errorf("%w: %d, this index answers 0..%d (layout %s)", ErrBadK, k, ix.layout.K, ix.layout)
	}
	return nil
}

// Lookup finds the documents whose fingerprints are within opt.K of fp.
func (ix *Index) Lookup(ctx context.Context, fp fingerprint.Fingerprint, opt LookupOptions) (LookupResult, error) {
	res, err := ix.LookupBatch(ctx, []fingerprint.Fingerprint{fp}, opt)
	if err != nil {
		return LookupResult{}, err
	}
	return res[0], nil
}

// LookupBatch looks up several fingerprints with the same options, reading
// all their index rows in one store call, all candidate fp rows in a
// second and, when there are any, the docs rows of the documents on them
// in a third (only committed documents are hits: Index.committed).
func (ix *Index) LookupBatch(ctx context.Context, fps []fingerprint.Fingerprint, opt LookupOptions) ([]LookupResult, error) {
	if err := ix.checkK(opt.K); err != nil {
		return nil, err
	}
	if opt.Limit < 0 {
		return nil, fmt.Errorf("%w: negative limit %d", ErrBadOptions, opt.Limit)
	}
	if !opt.Since.IsZero() && !opt.Until.IsZero() && opt.Until.Before(opt.Since) {
		return nil, fmt.Errorf("%w: until %s is before since %s", ErrBadOptions, opt.Until.Format(time.RFC3339), opt.Since.Format(time.RFC3339))
	}
	win := ix.window(opt.Since, opt.Until)
	cands, examined, _, _, err := ix.candidates(ctx, fps, nil, nil, opt.K, win)
	if err != nil {
		return nil, err
	}
	fpRows, err := ix.readFPRows(ctx, cands)
	if err != nil {
		return nil, err
	}
	inWindow := func(e fpEntry) bool {
		return (opt.Since.IsZero() || !e.time.Before(opt.Since)) && (opt.Until.IsZero() || e.time.Before(opt.Until))
	}
	if err := ix.committed(ctx, fpRows, inWindow); err != nil {
		return nil, err
	}
	out := make([]LookupResult, len(fps))
	for i, q := range fps {
		var hits []Hit
		for _, c := range cands[i] {
			for _, e := range fpRows[c] {
				d := bits.OnesCount64(uint64(q) ^ c)
				hits = append(hits, Hit{ID: e.id, Fingerprint: fingerprint.Fingerprint(c), Distance: d, Time: e.time,
					Exact: d == 0 && opt.ExactHash != 0 && e.exact == opt.ExactHash})
			}
		}
		slices.SortFunc(hits, hitCmp)
		ix.m.candidates.Observe(float64(examined[i]))
		ix.m.hits.Observe(float64(len(hits)))
		r := LookupResult{Hits: hits, Candidates: examined[i]}
		if opt.Limit > 0 && len(hits) > opt.Limit {
			r.Hits, r.Truncated = hits[:opt.Limit:opt.Limit], true
		}
		out[i] = r
	}
	return out, nil
}

// bucketWindow is the range of time buckets a lookup reads.
type bucketWindow struct{ lo, hi uint32 }

func (ix *Index) window(since, until time.Time) bucketWindow {
	w := bucketWindow{0, 1<<32 - 1}
	if !since.IsZero() {
		w.lo = ix.buckets.Of(since)
	}
	if !until.IsZero() {
		w.hi = ix.buckets.Of(until)
	}
	return w
}

func (w bucketWindow) has(b uint32) bool { return b >= w.lo && b <= w.hi }

// u64Pool holds residual scratch slices for base-set decoding.
var u64Pool = sync.Pool{New: func() any { s := make([]uint64, 0, 1024); return &s }}

// candidates reads the index rows of every query and returns, per query, the
// distinct stored fingerprints within k (from base sets and deltas, minus
// tombstones, in buckets of the window), sorted, and the number of residuals
// examined. When the index has bands and bands is not nil, the same store
// call reads the band rows of every query with a band signature (bands[i])
// and byBand[i] lists the distinct document ids found there, sorted, and
// keyDocs[i] the counts of its text-key rows; with sources (nil: none),
// a second store call reads the counts of those rows scoped to sources[i]
// (sourceKeyDocs).
func (ix *Index) candidates(ctx context.Context, fps []fingerprint.Fingerprint, bands []fingerprint.Bands, sources []string, k int, win bucketWindow) (cands [][]uint64, examined []int, byBand [][]string, keyDocs []KeyCounts, err error) {
	tables := ix.cover[k]
	keys := make([]storage.RowKey, 0, len(fps)*len(tables)+len(bands)*fingerprint.NumBands)
	rowOf := make([]int, len(fps)*len(tables))
	// Index row keys are at most 9 bytes (table id + a prefix of up to 64
	// bits): one buffer holds them all, and a batch deduplicates them by a
	// fixed-size key, without a string per row. A single query's T rows
	// are distinct (one per table), so it needs no map at all.
	kbuf := make([]byte, 0, len(fps)*len(tables)*rowKeyMax)
	var slot map[rowKeyID]int
	if len(fps) > 1 {
		slot = make(map[rowKeyID]int, len(fps)*len(tables))
	}
	for i, fp := range fps {
		for j, t := range tables {
			p := ix.perms[t]
			start := len(kbuf)
			kbuf = IndexRowKey(kbuf, t, p.Prefix(p.Permute(fp)), p.PrefixBits)
			kb := kbuf[start:len(kbuf):len(kbuf)]
			s := len(keys)
			if slot != nil {
				id := makeRowKeyID(kb)
				if prev, ok := slot[id]; ok {
					s = prev
					kbuf = kbuf[:start]
				} else {
					slot[id] = s
				}
			}
			if s == len(keys) {
				keys = append(keys, storage.RowKey{Table: storage.TableIndex, Key: kb})
			}
			rowOf[i*len(tables)+j] = s
		}
	}
	nIndex := len(keys)
	bandRowOf := ix.appendBandKeys(&keys, bands)
	rows, err := ix.get(ctx, keys)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if bandRowOf != nil {
		if byBand, keyDocs, err = ix.bandIDs(rows, bandRowOf, bands); err != nil {
			return nil, nil, nil, nil, err
		}
		if err = ix.sourceKeyDocs(ctx, bands, sources, keyDocs); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	rows = rows[:nIndex]
	sp := u64Pool.Get().(*[]uint64)
	defer u64Pool.Put(sp)
	out := make([][]uint64, len(fps))
	examined = make([]int, len(fps))
	for i, fp := range fps {
		var found []uint64
		for j, t := range tables {
			p := ix.perms[t]
			v := p.Permute(fp)
			prefix, q := p.Prefix(v), p.Residual(v)
			row := rows[rowOf[i*len(tables)+j]]
			matched, n, err := ix.scanRow(row, 64-p.PrefixBits, q, k, win, sp)
			if err != nil {
				ix.m.corrupt.Inc()
				return nil, nil, nil, nil, err
			}
			examined[i] += n
			for _, r := range matched {
				found = append(found, uint64(p.Unpermute(p.Join(prefix, r))))
			}
		}
		slices.Sort(found)
		out[i] = slices.Compact(found)
	}
	return out, examined, byBand, keyDocs, nil
}

// scanRow returns the residuals of row within distance k of q (base sets and
// deltas of buckets in win, minus tombstones) and how many it examined.
func (ix *Index) scanRow(row storage.Row, residualBits int, q uint64, k int, win bucketWindow, scratch *[]uint64) (matched []uint64, examined int, err error) {
	var tomb []uint64
	for _, c := range row.Cells {
		if len(c.Qualifier) == 0 {
			return nil, 0, corrupt(storage.TableIndex, row.Key, c.Qualifier, "empty qualifier")
		}
		switch c.Qualifier[0] {
		case qualBase:
			iq, err := parseIndexQualifier(c.Qualifier)
			if err != nil {
				return nil, 0, corrupt(storage.TableIndex, row.Key, c.Qualifier, "%v", err)
			}
			if !win.has(iq.Bucket) {
				continue
			}
			rs, err := storage.DecodeBaseSet((*scratch)[:0], c.Value, residualBits)
			*scratch = rs[:0]
			if err != nil {
				return nil, 0, corrupt(storage.TableIndex, row.Key, c.Qualifier, "%v", err)
			}
			examined += len(rs)
			for _, r := range rs {
				if bits.OnesCount64(r^q) <= k {
					matched = append(matched, r)
				}
			}
		case qualDelta:
			iq, err := parseIndexQualifier(c.Qualifier)
			if err != nil || (residualBits < 64 && iq.Residual>>residualBits != 0) {
				return nil, 0, corrupt(storage.TableIndex, row.Key, c.Qualifier, "bad delta qualifier (%v)", err)
			}
			if !win.has(iq.Bucket) {
				continue
			}
			examined++
			if bits.OnesCount64(iq.Residual^q) <= k {
				matched = append(matched, iq.Residual)
			}
		case qualTombstone:
			iq, err := parseIndexQualifier(c.Qualifier)
			if err != nil {
				return nil, 0, corrupt(storage.TableIndex, row.Key, c.Qualifier, "%v", err)
			}
			if bits.OnesCount64(iq.Residual^q) <= k {
				tomb = append(tomb, iq.Residual)
			}
		default:
			return nil, 0, corrupt(storage.TableIndex, row.Key, c.Qualifier, "unknown cell kind %q", c.Qualifier[0])
		}
	}
	if len(tomb) > 0 {
		matched = slices.DeleteFunc(matched, func(r uint64) bool { return slices.Contains(tomb, r) })
	}
	return matched, examined, nil
}

// fpEntry is one document carrying a fingerprint (one fp-table cell).
type fpEntry struct {
	id    string
	time  time.Time
	exact uint64
}

// readFPRows reads the fp rows of every distinct candidate fingerprint.
func (ix *Index) readFPRows(ctx context.Context, cands [][]uint64) (map[uint64][]fpEntry, error) {
	var fps []uint64
	for _, c := range cands {
		fps = append(fps, c...)
	}
	return ix.readFPs(ctx, fps)
}

func (ix *Index) readFPs(ctx context.Context, fps []uint64) (map[uint64][]fpEntry, error) {
	slices.Sort(fps)
	fps = slices.Compact(fps)
	out := make(map[uint64][]fpEntry, len(fps))
	if len(fps) == 0 {
		return out, nil
	}
	keys := make([]storage.RowKey, len(fps))
	for i, f := range fps {
		keys[i] = storage.RowKey{Table: storage.TableFP, Key: FPRowKey(f)}
	}
	rows, err := ix.get(ctx, keys)
	if err != nil {
		return nil, err
	}
	for i, row := range rows {
		if len(row.Cells) == 0 {
			continue
		}
		es := make([]fpEntry, 0, len(row.Cells))
		for _, c := range row.Cells {
			t, exact, err := decodeFPCell(c.Value)
			if err != nil {
				ix.m.corrupt.Inc()
				return nil, corrupt(storage.TableFP, row.Key, c.Qualifier, "%v", err)
			}
			es = append(es, fpEntry{id: string(c.Qualifier), time: t, exact: exact})
		}
		out[fps[i]] = es
	}
	return out, nil
}
