package kvindex

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/storage"
)

// RowStat is the size of one index row.
type RowStat struct {
	Table        int
	Prefix       uint64
	Fingerprints int // base-set entries plus deltas, minus tombstones
	Bytes        int // bytes of cell values and qualifiers
}

// Stats describes an index.
type Stats struct {
	Documents    int64
	Fingerprints int64 // distinct fingerprints carried by documents
	Layout       fingerprint.Layout
	// FullestRows are the largest index rows, fullest first (only when
	// asked for: it scans the index table).
	FullestRows []RowStat
	// IndexRows and IndexBytes cover the whole index table (with FullestRows).
	IndexRows  int64
	IndexBytes int64
}

// StatsOptions say how much work Stats may do.
type StatsOptions struct {
	// FullestRows > 0 scans the whole index table (cost grows with the
	// index: about a second per 10^7 fingerprints on the embedded store) and
	// reports that many of the fullest rows.
	FullestRows int
}

// Stats returns the document and fingerprint counters (cheap: one
// multi-get of the counters rows).
func (ix *Index) Stats(ctx context.Context) (Stats, error) {
	return ix.StatsWith(ctx, StatsOptions{})
}

// StatsWith is Stats with options.
func (ix *Index) StatsWith(ctx context.Context, opt StatsOptions) (Stats, error) {
	st := Stats{Layout: ix.layout}
	var err error
	st.Documents, st.Fingerprints, err = ix.counterSums(ctx)
	if err != nil {
		return st, err
	}
	if opt.FullestRows <= 0 {
		return st, nil
	}
	err = ix.ScanRows(ctx, func(rs RowStat) error {
		st.IndexRows++
		st.IndexBytes += int64(rs.Bytes)
		if len(st.FullestRows) < opt.FullestRows || rs.Fingerprints > st.FullestRows[len(st.FullestRows)-1].Fingerprints {
			i, _ := slices.BinarySearchFunc(st.FullestRows, rs, func(a, b RowStat) int { return b.Fingerprints - a.Fingerprints })
			st.FullestRows = slices.Insert(st.FullestRows, i, rs)
			if len(st.FullestRows) > opt.FullestRows {
				st.FullestRows = st.FullestRows[:opt.FullestRows]
			}
		}
		return nil
	})
	return st, err
}

// ScanRows calls fn with the size of every index row, in key order.
func (ix *Index) ScanRows(ctx context.Context, fn func(RowStat) error) error {
	if ix.closed.Load() {
		return ErrClosed
	}
	err := ix.st.Scan(ctx, storage.TableIndex, nil, nil, func(row storage.Row) error {
		t, prefix, err := ParseIndexRowKey(row.Key, ix.bits)
		if err != nil {
			return callerErr{corrupt(storage.TableIndex, row.Key, nil, "%v", err)}
		}
		rs := RowStat{Table: t, Prefix: prefix}
		for _, c := range row.Cells {
			rs.Bytes += len(c.Qualifier) + len(c.Value)
			if len(c.Qualifier) == 0 {
				return callerErr{corrupt(storage.TableIndex, row.Key, c.Qualifier, "empty qualifier")}
			}
			switch c.Qualifier[0] {
			case qualBase:
				n, err := storage.BaseSetLen(c.Value)
				if err != nil {
					return callerErr{corrupt(storage.TableIndex, row.Key, c.Qualifier, "%v", err)}
				}
				rs.Fingerprints += n
			case qualDelta:
				rs.Fingerprints++
			case qualTombstone:
				rs.Fingerprints--
			}
		}
		if err := fn(rs); err != nil {
			return callerErr{err}
		}
		return nil
	})
	var ce callerErr
	if errors.As(err, &ce) {
		return ce.err
	}
	if err != nil {
		return storeErr(err)
	}
	return nil
}

// callerErr marks an error raised inside a Scan callback, so that it is not
// mistaken for a store failure.
type callerErr struct{ err error }

func (e callerErr) Error() string { return e.err.Error() }

// counterSums reads the document and fingerprint counters: the sums of
// the counter rows, plus what the process holds (CounterInterval).
func (ix *Index) counterSums(ctx context.Context) (docs, fps int64, err error) {
	if cb := ix.counters; cb != nil {
		// No addition is both written and held, nor neither, while a
		// write of the held ones is kept out.
		cb.mu.Lock()
		defer cb.mu.Unlock()
		docs, fps = cb.docs.Load(), cb.fps.Load()
	}
	keys := []storage.RowKey{{Table: storage.TableMeta, Key: countersRow}}
	if ix.shardCounters {
		for s := range CounterShards {
			keys = append(keys, storage.RowKey{Table: storage.TableMeta, Key: CounterShardRow(s)})
		}
	}
	rows, err := ix.get(ctx, keys)
	if err != nil {
		return 0, 0, err
	}
	for _, row := range rows {
		for _, c := range row.Cells {
			if len(c.Value) != 8 {
				return 0, 0, corrupt(storage.TableMeta, row.Key, c.Qualifier, "counter of %d bytes", len(c.Value))
			}
			v := int64(binary.BigEndian.Uint64(c.Value))
			switch string(c.Qualifier) {
			case string(qualDocuments):
				docs += v
			case string(qualFingerprints):
				fps += v
			}
		}
	}
	return docs, fps, nil
}
