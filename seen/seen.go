// Package seen keeps per-user seen sets for feeds: which
// items a user has been shown, so a candidate list can drop them, and, since
// simdex knows fingerprints, which candidates are near-duplicates of
// something the user has seen.
//
// Storage (docs/FORMAT.md, "seen table") is one row per user in
// kvindex.TableSeen, salted with two bytes of the user's hash so users spread
// over regions, with cells per time bucket. A mark writes delta cells only
// (no read-modify-write), so concurrent marks from several servers never
// lose an item; a fold (Service.FoldAll, run by the server's compaction
// timer) rewrites a user's deltas into one compact cell per bucket: the
// sorted per-user item hashes (HashBits wide, default 40) in kvindex's
// base-set codec (Rice-coded gaps, varint or Snappy, whichever is shortest),
// plus the (hash, fingerprint) pairs of marks that carried a fingerprint.
// The fold holds a per-user lock (in-process stripes and the store's
// cross-process Locker) and deletes exactly the delta cells it read, so a
// mark written while it runs is kept for the next fold.
//
// The set is exact up to hash collisions: an absent id reads as seen with
// probability at most n/2^HashBits for a user with n live items; a marked
// id always reads as seen (no false negatives) until it expires or is
// deleted. Buckets older than Retention are ignored on read, dropped by the
// fold and expired by HBase's TTL (cells carry their bucket's start as
// timestamp).
package seen

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// Store is what the package needs of a storage.Store (pebblestore and
// hbasestore implement it).
type Store interface {
	Get(ctx context.Context, keys []storage.RowKey) ([]storage.Row, error)
	Mutate(ctx context.Context, muts []storage.Mutation) error
	Scan(ctx context.Context, table storage.Table, start, end []byte, fn func(storage.Row) error) error
}

// sharedGetter is the optional part of a Store that can answer rows whose
// bytes it shares with other readers (pebblestore's row cache): the reads
// that only decode rows use it, saving a copy of each row.
type sharedGetter interface {
	GetShared(ctx context.Context, keys []storage.RowKey) ([]storage.Row, error)
}

// Service answers seen-set calls over a Store. Safe for concurrent use.
type Service struct {
	st      Store
	cfg     Config
	buckets storage.Buckets
	metrics *metrics
	// foldLocks are in-process stripes: holding foldLocks[i] is the right to
	// read-then-rewrite every seen row whose hash falls on stripe i.
	foldLocks [256]sync.Mutex
	// afterFoldRead, when set (tests), runs in a fold between its read of
	// a row and its rewrite, with the row's lock held.
	afterFoldRead func(key []byte)
}

// The meta table row holding the seen table's fixed parameters.
var (
	metaRow         = []byte("seen")
	metaFormat      = []byte("format")
	metaHashBits    = []byte("hash_bits")
	metaBucketWidth = []byte("bucket_seconds")
)

// Open checks (or, on first use, records) the seen table's parameters in
// the meta table and returns the Service.
func Open(ctx context.Context, st Store, cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	s := &Service{st: st, cfg: cfg, buckets: storage.Buckets{Width: cfg.BucketWidth}, metrics: m}
	if err := s.checkMeta(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Service) checkMeta(ctx context.Context) error {
	want := map[string]string{
		string(metaFormat):      strconv.Itoa(FormatVersion),
		string(metaHashBits):    strconv.Itoa(s.cfg.HashBits),
		string(metaBucketWidth): strconv.FormatInt(int64(s.cfg.BucketWidth/time.Second), 10),
	}
	rows, err := s.st.Get(ctx, []storage.RowKey{{Table: storage.TableMeta, Key: metaRow}})
	if err != nil {
		return fmt.Errorf("seen: reading metadata: %w", err)
	}
	if len(rows[0].Cells) == 0 {
		var muts []storage.Mutation
		for _, q := range [][]byte{metaFormat, metaHashBits, metaBucketWidth} {
			muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableMeta, Row: metaRow, Qualifier: q, Value: []byte(want[string(q)])})
		}
		if err := s.st.Mutate(ctx, muts); err != nil {
			return fmt.Errorf("seen: writing metadata: %w", err)
		}
		return nil
	}
	got := map[string]string{}
	for _, c := range rows[0].Cells {
		got[string(c.Qualifier)] = string(c.Value)
	}
	if s.cfg.AdoptStored {
		hb, err1 := strconv.Atoi(got[string(metaHashBits)])
		bw, err2 := strconv.ParseInt(got[string(metaBucketWidth)], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("%w: unreadable seen metadata %q: %w", ErrMetaMismatch, got, err)
		}
		s.cfg.HashBits, s.cfg.BucketWidth = hb, time.Duration(bw)*time.Second
		if err := s.cfg.Validate(); err != nil {
			return fmt.Errorf("%w: stored seen metadata %q: %w", ErrMetaMismatch, got, err)
		}
		s.buckets = storage.Buckets{Width: s.cfg.BucketWidth}
		want[string(metaHashBits)], want[string(metaBucketWidth)] = got[string(metaHashBits)], got[string(metaBucketWidth)]
	}
	for k, v := range want {
		if got[k] != v {
			return fmt.Errorf("%w: the seen table has %s=%q, this configuration %q", ErrMetaMismatch, k, got[k], v)
		}
	}
	return nil
}

// Config returns the defaulted configuration.
func (s *Service) Config() Config { return s.cfg }

// Mark is one item a user has been shown. DocID or Fingerprint (with
// HasFingerprint) attach the item's fingerprint, for near-duplicate
// filtering; DocID is looked up in Config.Docs.
type Mark struct {
	ID             string
	DocID          string
	Fingerprint    fingerprint.Fingerprint
	HasFingerprint bool
}

// UserMarks is one user's marks in a batch.
type UserMarks struct {
	User  string
	Marks []Mark
}

// MarkResult is the outcome of marking one user's items.
type MarkResult struct {
	// Marked is the number of items marked.
	Marked int
	// UnknownDocs lists document ids that are not in the index: their
	// items are marked, without a fingerprint.
	UnknownDocs []string
}

// Candidate is one item a feed wants to show. For near-duplicate
// filtering its fingerprint comes from Fingerprint (HasFingerprint) or is
// looked up by DocID.
type Candidate struct {
	ID             string
	DocID          string
	Fingerprint    fingerprint.Fingerprint
	HasFingerprint bool
}

// FilterRequest is one user's candidate list.
type FilterRequest struct {
	User       string
	Candidates []Candidate
	// Near also drops candidates within distance K of a fingerprint the
	// user has seen.
	Near bool
	K    int
}

// Drop reasons.
const (
	ReasonSeen = "seen" // the item id was marked
	ReasonNear = "near" // a near-duplicate of a seen item
)

// Dropped is a candidate a filter removed.
type Dropped struct {
	Index  int    // position in the request
	ID     string // the candidate's id
	Reason string // ReasonSeen or ReasonNear
	// Distance is the Hamming distance to the nearest seen fingerprint
	// (ReasonNear only).
	Distance int
}

// FilterResult keeps the order of the request: Kept are the candidates to
// show, Dropped the others.
type FilterResult struct {
	Kept    []string
	Dropped []Dropped
	// UnknownDocs lists candidate document ids not in the index (those
	// candidates are only checked by id).
	UnknownDocs []string
}

// CheckRequest is one user's ids to check.
type CheckRequest struct {
	User string
	IDs  []string
}

// Mark records that user was shown marks (see MarkBatch).
func (s *Service) Mark(ctx context.Context, user string, marks []Mark) (MarkResult, error) {
	res, err := s.MarkBatch(ctx, []UserMarks{{User: user, Marks: marks}})
	if err != nil {
		return MarkResult{}, err
	}
	return res[0], nil
}

// MarkBatch records marks for several users in one store write. Each mark
// is a delta cell in the current bucket (and a fingerprint cell when it
// carries one): no read of the user's row, so concurrent marks never lose
// one another. Deltas are visible even when the item has a tombstone
// (tombstones hide folded cells only), so marking a deleted item again
// works at once.
func (s *Service) MarkBatch(ctx context.Context, batch []UserMarks) ([]MarkResult, error) {
	if err := s.checkUsers(len(batch)); err != nil {
		return nil, err
	}
	var docIDs []string
	for _, um := range batch {
		if err := checkID(um.User, true); err != nil {
			return nil, err
		}
		if len(um.Marks) > s.cfg.MaxItems {
			return nil, fmt.Errorf("%w: %d marks for user %q (at most %d)", ErrTooMany, len(um.Marks), um.User, s.cfg.MaxItems)
		}
		for _, m := range um.Marks {
			if err := checkID(m.ID, false); err != nil {
				return nil, err
			}
			if m.DocID != "" && !m.HasFingerprint {
				docIDs = append(docIDs, m.DocID)
			}
		}
	}
	fps, err := s.lookupDocs(ctx, docIDs)
	if err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	b := s.buckets.Of(now)
	ts := s.buckets.Start(b)
	out := make([]MarkResult, len(batch))
	var muts []storage.Mutation
	for i, um := range batch {
		row := RowKey(um.User)
		for _, m := range um.Marks {
			h := ItemHash(um.User, m.ID, s.cfg.HashBits)
			muts = append(muts,
				storage.Mutation{Kind: storage.Put, Table: storage.TableSeen, Row: row, Qualifier: deltaQualifier(qualDelta, b, h), Value: []byte{}, Timestamp: ts})
			fp, ok := docFingerprint(m.Fingerprint, m.HasFingerprint, m.DocID, fps, &out[i].UnknownDocs)
			if ok {
				muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableSeen, Row: row, Qualifier: deltaQualifier(qualFPDel, b, h),
					Value: binary.BigEndian.AppendUint64(nil, uint64(fp)), Timestamp: ts})
			}
		}
		out[i].Marked = len(um.Marks)
	}
	if len(muts) == 0 {
		return out, nil
	}
	if err := s.st.Mutate(ctx, muts); err != nil {
		return nil, fmt.Errorf("seen: marking: %w", err)
	}
	for _, r := range out {
		s.metrics.marks.Add(float64(r.Marked))
	}
	return out, nil
}

// Delete forgets one item of user: a tombstone that hides it in every
// bucket's folded cells until a fold removes it there, and deletes of its
// delta cells in every live bucket. No read of the row, but it holds the
// row's fold lock: a fold deletes the delta cells it read by qualifier,
// and a delete followed by a new mark of the same item rewrites the very
// qualifier the fold read, so a delete inside a fold's read-rewrite window
// would let the fold erase the new mark (marks alone need no lock: a
// rewritten delta of an item the fold folds in stays seen).
func (s *Service) Delete(ctx context.Context, user, item string) error {
	if err := checkID(user, true); err != nil {
		return err
	}
	if err := checkID(item, false); err != nil {
		return err
	}
	now := s.cfg.Now()
	h := ItemHash(user, item, s.cfg.HashBits)
	row := RowKey(user)
	lo, hi := s.liveFrom(now), s.buckets.Of(now)+1
	if lo > 0 {
		lo-- // a little slack for other servers' clocks
	}
	muts := []storage.Mutation{{Kind: storage.Put, Table: storage.TableSeen, Row: row, Qualifier: tombQualifier(h),
		Value: binary.BigEndian.AppendUint64(nil, uint64(now.UnixNano())), Timestamp: now}}
	for b := lo; b <= hi && b >= lo; b++ {
		muts = append(muts,
			storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableSeen, Row: row, Qualifier: deltaQualifier(qualDelta, b, h)},
			storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableSeen, Row: row, Qualifier: deltaQualifier(qualFPDel, b, h)})
	}
	unlock, err := s.lockRow(ctx, row)
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.st.Mutate(ctx, muts); err != nil {
		return fmt.Errorf("seen: deleting an item: %w", err)
	}
	s.metrics.deletes.Inc()
	return nil
}

// Forget deletes everything of user (the whole row), under the row's fold
// lock: a fold that read the row before the delete would otherwise write
// its folded cells back after it.
func (s *Service) Forget(ctx context.Context, user string) error {
	if err := checkID(user, true); err != nil {
		return err
	}
	row := RowKey(user)
	unlock, err := s.lockRow(ctx, row)
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.st.Mutate(ctx, []storage.Mutation{{Kind: storage.DeleteRow, Table: storage.TableSeen, Row: row}}); err != nil {
		return fmt.Errorf("seen: forgetting a user: %w", err)
	}
	s.metrics.forgets.Inc()
	return nil
}

// Check reports which of ids user has seen (see CheckBatch).
func (s *Service) Check(ctx context.Context, user string, ids []string) ([]bool, error) {
	res, err := s.CheckBatch(ctx, []CheckRequest{{User: user, IDs: ids}})
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// CheckBatch reports, per request, which ids the user has seen, reading all
// users' rows in one multi-get. An unknown user has seen nothing.
func (s *Service) CheckBatch(ctx context.Context, reqs []CheckRequest) ([][]bool, error) {
	if err := s.checkUsers(len(reqs)); err != nil {
		return nil, err
	}
	users := make([]string, len(reqs))
	for i, r := range reqs {
		if err := s.checkList(r.User, len(r.IDs)); err != nil {
			return nil, err
		}
		for _, id := range r.IDs {
			if err := checkID(id, false); err != nil {
				return nil, err
			}
		}
		users[i] = r.User
	}
	views, err := s.read(ctx, users, false)
	if err != nil {
		return nil, err
	}
	defer releaseViews(views)
	out := make([][]bool, len(reqs))
	var hs hasher
	for i, r := range reqs {
		out[i] = make([]bool, len(r.IDs))
		hs.forUser(r.User)
		for j, id := range r.IDs {
			out[i][j] = views[i].has(hs.item(id, s.cfg.HashBits))
		}
		s.metrics.checked.Add(float64(len(r.IDs)))
	}
	return out, nil
}

// Filter drops from candidates what user has seen (see FilterBatch).
func (s *Service) Filter(ctx context.Context, req FilterRequest) (FilterResult, error) {
	res, err := s.FilterBatch(ctx, []FilterRequest{req})
	if err != nil {
		return FilterResult{}, err
	}
	return res[0], nil
}

// FilterBatch filters each request's candidates, keeping their order:
// a candidate whose id the user has seen is dropped (ReasonSeen); with
// Near, so is one whose fingerprint is within K of a fingerprint the user
// has seen (ReasonNear). All users' rows are read in one multi-get, and
// document fingerprints in one more.
func (s *Service) FilterBatch(ctx context.Context, reqs []FilterRequest) ([]FilterResult, error) {
	out := make([]FilterResult, len(reqs))
	if err := s.filter(ctx, reqs, out, false); err != nil {
		return nil, err
	}
	return out, nil
}

// FilterInto is Filter writing its answer into *res, reusing the memory of
// res.Kept, res.Dropped and res.UnknownDocs (their contents are replaced),
// for callers that pool answers: a server filtering hundreds of lists a
// second. On error *res is unspecified.
func (s *Service) FilterInto(ctx context.Context, req FilterRequest, res *FilterResult) error {
	out := [1]FilterResult{*res}
	err := s.filter(ctx, []FilterRequest{req}, out[:], true)
	*res = out[0]
	return err
}

// FilterFlags is a filter of plain ids without near (no fingerprints,
// Near false) answered as a flag per id: dst[i] (dst's memory is reused)
// reports whether the filter drops ids[i] (ReasonSeen: the user has seen
// it); the kept ids are the others, in order. It checks and counts as
// FilterInto does. Why: a feed server that asks only for what to keep
// needs neither the candidate structs nor the Kept and Dropped lists,
// which were a tenth of a 500-candidate filter's CPU behind REST.
func (s *Service) FilterFlags(ctx context.Context, user string, ids []string, dst []bool) ([]bool, error) {
	if err := s.checkList(user, len(ids)); err != nil {
		return dst, err
	}
	for _, id := range ids {
		if err := checkID(id, false); err != nil {
			return dst, err
		}
	}
	views, err := s.read(ctx, []string{user}, false)
	if err != nil {
		return dst, err
	}
	defer releaseViews(views)
	dst = slices.Grow(dst[:0], len(ids))[:len(ids)]
	hs := hasher{buf: make([]byte, 0, 128)}
	hs.forUser(user)
	nSeen := 0
	for j, id := range ids {
		dst[j] = views[0].has(hs.item(id, s.cfg.HashBits))
		if dst[j] {
			nSeen++
		}
	}
	s.metrics.checked.Add(float64(len(ids)))
	s.metrics.droppedSeen.Add(float64(nSeen))
	return dst, nil
}

// filter answers reqs into out (len(out) == len(reqs)); reuse keeps the
// memory of out's slices, else each answer is allocated at its size.
func (s *Service) filter(ctx context.Context, reqs []FilterRequest, out []FilterResult, reuse bool) error {
	if err := s.checkUsers(len(reqs)); err != nil {
		return err
	}
	users := make([]string, len(reqs))
	near := false
	var docIDs []string
	for i, r := range reqs {
		if err := s.checkList(r.User, len(r.Candidates)); err != nil {
			return err
		}
		if r.Near && (r.K < 0 || r.K > s.cfg.MaxK) {
			return fmt.Errorf("%w: k=%d, want 0..%d", ErrBadK, r.K, s.cfg.MaxK)
		}
		for _, c := range r.Candidates {
			if err := checkID(c.ID, false); err != nil {
				return err
			}
			if r.Near && c.DocID != "" && !c.HasFingerprint {
				docIDs = append(docIDs, c.DocID)
			}
		}
		users[i] = r.User
		near = near || r.Near
	}
	views, err := s.read(ctx, users, near)
	if err != nil {
		return err
	}
	defer releaseViews(views)
	fps, err := s.lookupDocs(ctx, docIDs)
	if err != nil {
		return err
	}
	var hs hasher
	sc := views[0].sc // its isSeen buffer serves every request in turn
	for i, r := range reqs {
		v := &views[i]
		var nix *nearIndex
		if r.Near && len(v.fps)*len(r.Candidates) > 1<<14 {
			nix = newNearIndex(v.fps, r.K) // nil: the linear scan is as good
		}
		// Look every id up first (hashing each once) so that Kept and
		// Dropped are allocated at their size: growing Dropped by append
		// was the largest allocation of a filter.
		isSeen := slices.Grow(sc.isSeen[:0], len(r.Candidates))[:len(r.Candidates)]
		sc.isSeen = isSeen
		nSeen := 0
		hs.forUser(r.User)
		for j, c := range r.Candidates {
			isSeen[j] = v.has(hs.item(c.ID, s.cfg.HashBits))
			if isSeen[j] {
				nSeen++
			}
		}
		res := &out[i]
		if reuse {
			if res.Kept == nil {
				res.Kept = []string{} // never nil, as FilterBatch's: "kept": [] not null
			}
			res.Kept = slices.Grow(res.Kept[:0], len(r.Candidates)-nSeen)
			res.Dropped = slices.Grow(res.Dropped[:0], nSeen)
			res.UnknownDocs = res.UnknownDocs[:0]
		} else {
			*res = FilterResult{Kept: make([]string, 0, len(r.Candidates)-nSeen)}
			if nSeen > 0 {
				res.Dropped = make([]Dropped, 0, nSeen)
			}
		}
		var judged []int // with a NearJudge: each candidate's confirmed near distance, -1 for none
		if r.Near && len(v.fps) > 0 && s.cfg.Near != nil {
			if judged, err = s.judgeNear(ctx, r, v, nix, isSeen, fps); err != nil {
				return err
			}
		}
		for j, c := range r.Candidates {
			if isSeen[j] {
				res.Dropped = append(res.Dropped, Dropped{Index: j, ID: c.ID, Reason: ReasonSeen})
				continue
			}
			if judged != nil {
				if c.DocID != "" && !c.HasFingerprint {
					if _, ok := fps[c.DocID]; !ok {
						res.UnknownDocs = append(res.UnknownDocs, c.DocID)
					}
				}
				if d := judged[j]; d >= 0 {
					res.Dropped = append(res.Dropped, Dropped{Index: j, ID: c.ID, Reason: ReasonNear, Distance: d})
					continue
				}
			} else if r.Near && len(v.fps) > 0 {
				fp, ok := docFingerprint(c.Fingerprint, c.HasFingerprint, c.DocID, fps, &res.UnknownDocs)
				if ok {
					d := -1
					if nix != nil {
						d = nix.nearest(uint64(fp), r.K)
					} else {
						d = v.nearest(uint64(fp), r.K)
					}
					if d >= 0 {
						res.Dropped = append(res.Dropped, Dropped{Index: j, ID: c.ID, Reason: ReasonNear, Distance: d})
						continue
					}
				}
			}
			res.Kept = append(res.Kept, c.ID)
		}
		s.metrics.checked.Add(float64(len(r.Candidates)))
		nearN := 0
		for _, d := range res.Dropped {
			if d.Reason == ReasonNear {
				nearN++
			}
		}
		s.metrics.droppedSeen.Add(float64(len(res.Dropped) - nearN))
		s.metrics.droppedNear.Add(float64(nearN))
	}
	return nil
}

// judgeNear finds every seen fingerprint within r.K of each candidate that
// is not seen, has the NearJudge confirm the pairs in one call, and returns
// per candidate the smallest confirmed distance (-1: none).
func (s *Service) judgeNear(ctx context.Context, r FilterRequest, v *view, nix *nearIndex, isSeen []bool, fps map[string]docFP) ([]int, error) {
	out := make([]int, len(r.Candidates))
	var pairs []NearPair
	var owner []int
	var buf []uint64
	for j, c := range r.Candidates {
		out[j] = -1
		if isSeen[j] {
			continue
		}
		fp, ok := c.Fingerprint, c.HasFingerprint
		if !ok && c.DocID != "" {
			var f docFP
			if f, ok = fps[c.DocID]; ok {
				fp = f.fp
			}
		}
		if !ok {
			continue
		}
		if nix != nil {
			buf = nix.within(uint64(fp), r.K, buf[:0])
		} else {
			buf = v.within(uint64(fp), r.K, buf[:0])
		}
		for _, sf := range buf {
			pairs = append(pairs, NearPair{DocID: c.DocID, Fingerprint: fp, Seen: fingerprint.Fingerprint(sf), Distance: bits.OnesCount64(sf ^ uint64(fp))})
			owner = append(owner, j)
		}
	}
	if len(pairs) == 0 {
		return out, nil
	}
	ok, err := s.cfg.Near.ConfirmNear(ctx, pairs)
	if err != nil {
		return nil, fmt.Errorf("seen: confirming near-duplicates: %w", err)
	}
	for i, p := range pairs {
		if j := owner[i]; ok[i] && (out[j] < 0 || p.Distance < out[j]) {
			out[j] = p.Distance
		}
	}
	return out, nil
}

func (s *Service) checkUsers(n int) error {
	if n == 0 {
		return fmt.Errorf("%w: no users", ErrBadUser)
	}
	if n > s.cfg.MaxUsers {
		return fmt.Errorf("%w: %d users in one call (at most %d)", ErrTooMany, n, s.cfg.MaxUsers)
	}
	return nil
}

func (s *Service) checkList(user string, n int) error {
	if err := checkID(user, true); err != nil {
		return err
	}
	if n > s.cfg.MaxItems {
		return fmt.Errorf("%w: %d ids for user %q (at most %d)", ErrTooMany, n, user, s.cfg.MaxItems)
	}
	return nil
}

// liveFrom is the oldest live bucket at now: the one holding now-Retention
// (it still has items younger than the retention).
func (s *Service) liveFrom(now time.Time) uint32 {
	return s.buckets.Of(now.Add(-s.cfg.Retention))
}

// read fetches and decodes the users' rows in one multi-get.
func (s *Service) read(ctx context.Context, users []string, withFPs bool) ([]view, error) {
	keys := make([]storage.RowKey, len(users))
	for i, u := range users {
		keys[i] = storage.RowKey{Table: storage.TableSeen, Key: RowKey(u)}
	}
	get := s.st.Get
	if sg, ok := s.st.(sharedGetter); ok {
		get = sg.GetShared // decodeRow only reads the cells
	}
	rows, err := get(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("seen: reading: %w", err)
	}
	lo := s.liveFrom(s.cfg.Now())
	views := make([]view, len(rows))
	for i, r := range rows {
		if views[i], err = decodeRow(r, lo, s.cfg.HashBits, withFPs); err != nil {
			releaseViews(views[:i])
			return nil, err
		}
	}
	return views, nil
}

// releaseViews returns the views' memory to the pool.
func releaseViews(views []view) {
	for i := range views {
		views[i].release()
	}
}

// docFP is a document's fingerprint.
type docFP struct{ fp fingerprint.Fingerprint }

// docFingerprint is the fingerprint of an item or candidate: its own (fp,
// when has), else its document's (docID) from fps; a document fps does
// not hold is added to unknown, and ok is false when there is none.
func docFingerprint(fp fingerprint.Fingerprint, has bool, docID string, fps map[string]docFP, unknown *[]string) (_ fingerprint.Fingerprint, ok bool) {
	if has || docID == "" {
		return fp, has
	}
	f, ok := fps[docID]
	if !ok {
		*unknown = append(*unknown, docID)
	}
	return f.fp, ok
}

// lookupDocs resolves document ids through Config.Docs; unknown ids are
// absent from the map.
func (s *Service) lookupDocs(ctx context.Context, ids []string) (map[string]docFP, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if s.cfg.Docs == nil {
		return nil, fmt.Errorf("%w: document ids need the index (this service has none)", ErrBadItem)
	}
	for _, id := range ids {
		if err := checkID(id, false); err != nil {
			return nil, fmt.Errorf("document id: %w", err)
		}
	}
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	fps, found, err := s.cfg.Docs.Fingerprints(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("seen: looking up documents: %w", err)
	}
	out := make(map[string]docFP, len(ids))
	for i, id := range ids {
		if found[i] {
			out[id] = docFP{fps[i]}
		}
	}
	return out, nil
}

// IndexDocs resolves document ids through a kvindex index's docs table
// (one multi-get per call).
type IndexDocs struct {
	Index *kvindex.Index
}

// Fingerprints implements Docs.
func (d IndexDocs) Fingerprints(ctx context.Context, ids []string) ([]fingerprint.Fingerprint, []bool, error) {
	keys := make([]storage.RowKey, len(ids))
	for i, id := range ids {
		keys[i] = storage.RowKey{Table: storage.TableDocs, Key: []byte(id)}
	}
	rows, err := d.Index.Store().Get(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	fps := make([]fingerprint.Fingerprint, len(ids))
	found := make([]bool, len(ids))
	for i, r := range rows {
		if len(r.Cells) == 0 {
			continue
		}
		doc, err := d.Index.DecodeDocument(r)
		if err != nil {
			if errors.Is(err, kvindex.ErrNotFound) {
				continue
			}
			return nil, nil, err
		}
		fps[i], found[i] = doc.Fingerprint, true
	}
	return fps, found, nil
}
