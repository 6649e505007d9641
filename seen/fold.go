package seen

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/simdex/simdex/storage"
)

// LockKind is the kind of the Locker names that folds, deletes and forgets
// take: name = LockKind<<16 | (xxhash64(row key) mod 2^16). kvindex uses
// kinds 1 (document ids) and 2 (index rows); processes sharing a store must
// agree on names.
const LockKind = 3

// FoldSummary is what a fold did.
type FoldSummary struct {
	RowsScanned       int64
	RowsFolded        int64
	DeltasFolded      int64 // delta and fingerprint-delta cells
	TombstonesApplied int64
	BucketsDropped    int64
	Duration          time.Duration
	// StoreCompaction is "requested" when FoldAll asked the store to drop
	// the history of the rows it rewrote, "failed" when that request failed
	// (the fold itself still stands), else "".
	StoreCompaction string
}

// historyDropper is a store that keeps the history of rewritten cells
// until asked to drop it (hbasestore.Store.DropHistory).
type historyDropper interface {
	DropHistory(ctx context.Context, table storage.Table) error
}

func (a *FoldSummary) add(b FoldSummary) {
	a.RowsFolded += b.RowsFolded
	a.DeltasFolded += b.DeltasFolded
	a.TombstonesApplied += b.TombstonesApplied
	a.BucketsDropped += b.BucketsDropped
}

// FoldUser folds one user's row now.
func (s *Service) FoldUser(ctx context.Context, user string) (FoldSummary, error) {
	if err := checkID(user, true); err != nil {
		return FoldSummary{}, err
	}
	return s.foldRow(ctx, RowKey(user))
}

// errBatchFull stops a scan once a batch is full.
var errBatchFull = errors.New("seen: batch full")

// FoldAll folds every seen row that has deltas, tombstones or expired
// buckets, reading Config.BatchRows rows per scan (no iterator stays open
// while rows are rewritten) and checking ctx between rows. Runs may overlap
// marks, deletes, checks and other folds (each row is folded under its
// lock).
func (s *Service) FoldAll(ctx context.Context) (FoldSummary, error) {
	start := time.Now()
	var sum FoldSummary
	var from []byte
	for {
		var keys [][]byte
		var last []byte
		lo := s.liveFrom(s.cfg.Now())
		n := 0
		err := s.st.Scan(ctx, storage.TableSeen, from, nil, func(r storage.Row) error {
			if n == s.cfg.BatchRows {
				return errBatchFull
			}
			n++
			last = r.Key
			if needsFold(r, lo) {
				keys = append(keys, r.Key)
			}
			return nil
		})
		if err != nil && !errors.Is(err, errBatchFull) {
			return sum, fmt.Errorf("seen: fold scan: %w", err)
		}
		sum.RowsScanned += int64(n)
		for _, k := range keys {
			if err := ctx.Err(); err != nil {
				return sum, err
			}
			one, err := s.foldRow(ctx, k)
			if err != nil {
				return sum, err
			}
			sum.add(one)
		}
		if !errors.Is(err, errBatchFull) {
			break
		}
		from = append(bytes.Clone(last), 0)
	}
	var dropErr error
	if hd, ok := s.st.(historyDropper); ok && sum.RowsFolded > 0 && !s.cfg.KeepStoreHistory {
		sum.StoreCompaction = "requested"
		if dropErr = hd.DropHistory(ctx, storage.TableSeen); dropErr != nil {
			sum.StoreCompaction = "failed"
		}
	}
	sum.Duration = time.Since(start)
	attrs := []any{"rows_scanned", sum.RowsScanned, "rows_folded", sum.RowsFolded, "deltas_folded", sum.DeltasFolded,
		"tombstones_applied", sum.TombstonesApplied, "buckets_dropped", sum.BucketsDropped, "seconds", sum.Duration.Seconds()}
	if sum.StoreCompaction != "" {
		attrs = append(attrs, "store_compaction", sum.StoreCompaction)
	}
	if dropErr != nil {
		s.cfg.Logger.Warn("seen fold", append(attrs, "store_compaction_error", dropErr.Error())...)
		return sum, nil
	}
	s.cfg.Logger.Info("seen fold", attrs...)
	return sum, nil
}

func needsFold(r storage.Row, lo uint32) bool {
	for _, c := range r.Cells {
		q := c.Qualifier
		if len(q) == 0 {
			continue
		}
		switch q[0] {
		case qualDelta, qualFPDel, qualTomb:
			return true
		}
		if len(q) >= 5 && binary.BigEndian.Uint32(q[1:]) < lo {
			return true
		}
	}
	return false
}

// lockRow takes the row's in-process stripe and, with a Locker, its
// cross-process lock.
func (s *Service) lockRow(ctx context.Context, key []byte) (func(), error) {
	h := xxhash.Sum64(key)
	mu := &s.foldLocks[h%uint64(len(s.foldLocks))]
	mu.Lock()
	if s.cfg.Locker == nil {
		return mu.Unlock, nil
	}
	unlock, err := s.cfg.Locker.Lock(ctx, []uint64{LockKind<<16 | h%(1<<16)})
	if err != nil {
		mu.Unlock()
		return nil, fmt.Errorf("seen: taking the fold lock: %w", err)
	}
	return func() { unlock(); mu.Unlock() }, nil
}

// foldRow rewrites one row under its lock: see foldMutations.
func (s *Service) foldRow(ctx context.Context, key []byte) (FoldSummary, error) {
	return s.foldRowWith(ctx, key, nil)
}

// foldRowWith folds one row as if extra (delta cells) were in it too; the
// extra cells are never written, so no delete of them is either.
func (s *Service) foldRowWith(ctx context.Context, key []byte, extra []storage.Cell) (FoldSummary, error) {
	unlock, err := s.lockRow(ctx, key)
	if err != nil {
		return FoldSummary{}, err
	}
	defer unlock()
	rows, err := s.st.Get(ctx, []storage.RowKey{{Table: storage.TableSeen, Key: key}})
	if err != nil {
		return FoldSummary{}, fmt.Errorf("seen: fold read: %w", err)
	}
	row := rows[0]
	if s.afterFoldRead != nil {
		s.afterFoldRead(key)
	}
	row.Cells = append(row.Cells, extra...)
	muts, sum, err := foldMutations(row, s.liveFrom(s.cfg.Now()), s.cfg.HashBits, s.cfg.MaxCellBytes, s.buckets)
	if err != nil || len(muts) == 0 {
		return sum, err
	}
	if len(extra) > 0 {
		synthetic := make(map[string]bool, len(extra))
		for _, c := range extra {
			synthetic[string(c.Qualifier)] = true
		}
		muts = slices.DeleteFunc(muts, func(m storage.Mutation) bool {
			return m.Kind == storage.DeleteCell && synthetic[string(m.Qualifier)]
		})
	}
	if err := s.st.Mutate(ctx, muts); err != nil {
		return FoldSummary{}, fmt.Errorf("seen: fold write: %w", err)
	}
	s.metrics.foldRows.Inc()
	s.metrics.foldDeltas.Add(float64(sum.DeltasFolded))
	return sum, nil
}

// bucketCells are one bucket's cells of a row.
type bucketCells struct {
	base       []uint64
	baseChunks []int
	fps        []fpPair
	fpChunks   []int
	deltas     []uint64
	fpDeltas   []fpPair
	quals      [][]byte // every qualifier of the bucket
	deltaQuals [][]byte // its 'd' and 'e' qualifiers
}

// foldMutations computes the rewrite of one row read under its lock:
//   - a bucket older than lo loses all its cells;
//   - a live bucket with deltas, or whose folded set holds a tombstoned
//     hash, gets new folded cells: (folded - tombstones) + deltas, with the
//     fingerprint pairs of those items (a fingerprint delta replaces a
//     folded pair of the same hash); the delta cells read are deleted;
//   - the tombstones read are deleted (they have been applied to every
//     bucket).
//
// Only cells that were read are deleted, so a mark written after the read
// keeps its delta for the next fold. Row content unchanged: no mutations.
func foldMutations(r storage.Row, lo uint32, hashBits, maxCell int, bk storage.Buckets) ([]storage.Mutation, FoldSummary, error) {
	var sum FoldSummary
	buckets := map[uint32]*bucketCells{}
	var tombs []uint64
	var tombQuals [][]byte
	get := func(b uint32) *bucketCells {
		c := buckets[b]
		if c == nil {
			c = &bucketCells{}
			buckets[b] = c
		}
		return c
	}
	var err error
	for _, c := range r.Cells {
		q, perr := parseQualifier(c.Qualifier, hashBits)
		if perr != nil {
			return nil, sum, corrupt(r.Key, c.Qualifier, perr)
		}
		if q.kind == qualTomb {
			tombs = append(tombs, q.hash)
			tombQuals = append(tombQuals, c.Qualifier)
			continue
		}
		bc := get(q.bucket)
		bc.quals = append(bc.quals, c.Qualifier)
		if q.bucket < lo {
			continue // dropped whole; not decoded
		}
		switch q.kind {
		case qualBase:
			if bc.base, err = storage.DecodeBaseSet(bc.base, c.Value, hashBits); err != nil {
				return nil, sum, corrupt(r.Key, c.Qualifier, err)
			}
			bc.baseChunks = append(bc.baseChunks, q.chunk)
		case qualFPs:
			if bc.fps, err = decodeFPSet(bc.fps, c.Value, hashBits); err != nil {
				return nil, sum, corrupt(r.Key, c.Qualifier, err)
			}
			bc.fpChunks = append(bc.fpChunks, q.chunk)
		case qualDelta:
			bc.deltas = append(bc.deltas, q.hash)
			bc.deltaQuals = append(bc.deltaQuals, c.Qualifier)
		case qualFPDel:
			if len(c.Value) != 8 {
				return nil, sum, corrupt(r.Key, c.Qualifier, fmt.Errorf("%w: fingerprint delta of %d bytes, want 8", errCell, len(c.Value)))
			}
			bc.fpDeltas = append(bc.fpDeltas, fpPair{hash: q.hash, fp: binary.BigEndian.Uint64(c.Value)})
			bc.deltaQuals = append(bc.deltaQuals, c.Qualifier)
		}
	}
	slices.Sort(tombs)
	var muts []storage.Mutation
	del := func(q []byte) {
		muts = append(muts, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableSeen, Row: r.Key, Qualifier: q})
	}
	for _, b := range slices.Sorted(maps.Keys(buckets)) {
		bc := buckets[b]
		if b < lo {
			for _, q := range bc.quals {
				del(q)
			}
			sum.BucketsDropped++
			continue
		}
		slices.Sort(bc.base) // chunks arrive in order; sorting is cheap insurance
		hit := false
		for _, h := range bc.base {
			if inSorted(tombs, h) {
				hit = true
				break
			}
		}
		if len(bc.deltaQuals) == 0 && !hit {
			continue
		}
		items := slices.DeleteFunc(bc.base, func(h uint64) bool { return inSorted(tombs, h) })
		items = append(items, bc.deltas...)
		slices.Sort(items)
		items = slices.Compact(items)
		fpOf := make(map[uint64]uint64, len(bc.fps)+len(bc.fpDeltas))
		for _, p := range bc.fps {
			if !inSorted(tombs, p.hash) {
				fpOf[p.hash] = p.fp
			}
		}
		for _, p := range bc.fpDeltas {
			fpOf[p.hash] = p.fp
		}
		var pairs []fpPair
		for h, fp := range fpOf {
			if inSorted(items, h) {
				pairs = append(pairs, fpPair{hash: h, fp: fp})
			}
		}
		slices.SortFunc(pairs, func(a, b fpPair) int {
			switch {
			case a.hash < b.hash:
				return -1
			case a.hash > b.hash:
				return 1
			}
			return 0
		})
		var baseVals [][]byte
		if len(items) > 0 {
			if baseVals, err = storage.EncodeBaseSet(items, hashBits, maxCell); err != nil {
				return nil, sum, fmt.Errorf("seen: encoding bucket %d of row %x: %w", b, r.Key, err)
			}
		}
		fpVals := encodeFPSet(pairs, maxCell)
		ts := bk.Start(b)
		for i, v := range baseVals {
			muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableSeen, Row: r.Key, Qualifier: chunkQualifier(qualBase, b, i), Value: v, Timestamp: ts})
		}
		for _, c := range bc.baseChunks {
			if c >= len(baseVals) {
				del(chunkQualifier(qualBase, b, c))
			}
		}
		for i, v := range fpVals {
			muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableSeen, Row: r.Key, Qualifier: chunkQualifier(qualFPs, b, i), Value: v, Timestamp: ts})
		}
		for _, c := range bc.fpChunks {
			if c >= len(fpVals) {
				del(chunkQualifier(qualFPs, b, c))
			}
		}
		for _, q := range bc.deltaQuals {
			del(q)
		}
		sum.DeltasFolded += int64(len(bc.deltaQuals))
	}
	for _, q := range tombQuals {
		del(q)
	}
	sum.TombstonesApplied = int64(len(tombQuals))
	if len(muts) > 0 {
		sum.RowsFolded = 1
	}
	return muts, sum, nil
}

// TimedMark is a mark at a given time, for Import.
type TimedMark struct {
	Mark
	Time time.Time
}

// MaxImport bounds the marks of one Import call.
const MaxImport = 1 << 20

// Import writes one user's marks directly in folded form, each in the
// bucket of its Time (a backfill from another system, and benchmarks): the
// row is folded under its lock as if the marks were delta cells, so it
// merges with what the row holds and never loses a concurrent mark. Marks
// already out of the retention window are skipped; times after now are
// refused. Document ids are resolved as Mark does.
func (s *Service) Import(ctx context.Context, user string, marks []TimedMark) (MarkResult, error) {
	if err := checkID(user, true); err != nil {
		return MarkResult{}, err
	}
	if len(marks) > MaxImport {
		return MarkResult{}, fmt.Errorf("%w: %d marks in one import (at most %d)", ErrTooMany, len(marks), MaxImport)
	}
	now := s.cfg.Now()
	var docIDs []string
	for _, m := range marks {
		if err := checkID(m.ID, false); err != nil {
			return MarkResult{}, err
		}
		if m.Time.After(now) {
			return MarkResult{}, fmt.Errorf("%w: mark of %q at %v, after now", ErrBadItem, m.ID, m.Time)
		}
		if m.DocID != "" && !m.HasFingerprint {
			docIDs = append(docIDs, m.DocID)
		}
	}
	fps, err := s.lookupDocs(ctx, docIDs)
	if err != nil {
		return MarkResult{}, err
	}
	lo := s.liveFrom(now)
	var res MarkResult
	extra := make([]storage.Cell, 0, len(marks))
	for _, m := range marks {
		b := s.buckets.Of(m.Time)
		if b < lo {
			continue
		}
		h := ItemHash(user, m.ID, s.cfg.HashBits)
		extra = append(extra, storage.Cell{Qualifier: deltaQualifier(qualDelta, b, h), Value: []byte{}})
		fp, ok := docFingerprint(m.Fingerprint, m.HasFingerprint, m.DocID, fps, &res.UnknownDocs)
		if ok {
			extra = append(extra, storage.Cell{Qualifier: deltaQualifier(qualFPDel, b, h), Value: binary.BigEndian.AppendUint64(nil, uint64(fp))})
		}
		res.Marked++
	}
	if len(extra) == 0 {
		return res, nil
	}
	if _, err := s.foldRowWith(ctx, RowKey(user), extra); err != nil {
		return MarkResult{}, err
	}
	s.metrics.marks.Add(float64(res.Marked))
	return res, nil
}
