package kvindex

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/storage"
)

// InsertMode says when an insert stores the document.
type InsertMode int

const (
	// InsertAlways stores the document and reports its near-duplicates.
	InsertAlways InsertMode = iota
	// InsertIfUnique stores the document only when no stored document is
	// within distance k; otherwise it reports which one it duplicates.
	InsertIfUnique
)

// String is "insert" or "insert-if-unique".
func (m InsertMode) String() string {
	switch m {
	case InsertAlways:
		return "insert"
	case InsertIfUnique:
		return "insert-if-unique"
	}
	return fmt.Sprintf("InsertMode(%d)", int(m))
}

// InsertResult is the outcome of inserting one document.
type InsertResult struct {
	// Stored is false when InsertIfUnique found a near-duplicate.
	Stored bool
	// Replaced: the id existed and its old version was replaced.
	Replaced bool
	// Original is the earliest (time, id) stored document within k of the
	// new one, or nil when there is none. With InsertIfUnique it is the
	// document the new one duplicates.
	Original *Hit
	// Duplicates are all stored documents within k (other than the id
	// itself), sorted like lookup hits.
	Duplicates []Hit
}

// Insert stores doc (see InsertBatch). With Config.GroupWindow set,
// concurrent calls are decided together in groups (group.go); the result is
// the one the document would get alone, arriving at its Time.
func (ix *Index) Insert(ctx context.Context, doc Document, mode InsertMode, k int) (InsertResult, error) {
	if ix.grp != nil {
		return ix.grp.insert(ctx, doc, mode, k)
	}
	return ix.insertOne(ctx, doc, mode, k)
}

func (ix *Index) insertOne(ctx context.Context, doc Document, mode InsertMode, k int) (InsertResult, error) {
	res, errs, err := ix.InsertBatch(ctx, []Document{doc}, mode, k)
	if err != nil {
		return InsertResult{}, err
	}
	if errs[0] != nil {
		return InsertResult{}, errs[0]
	}
	return res[0], nil
}

// InsertBatch checks and inserts documents. Each document is compared with
// the stored documents and with the batch's documents that come before it in
// (time, id) order, so within a batch the earliest of a group of
// near-duplicates is the original whatever the input order. Re-inserting an
// id replaces its old version (a document is never its own duplicate). A
// document with a zero Time gets the current time.
//
// Concurrent inserts of near-duplicates serialize on the rows they share, so
// exactly one of them is stored by InsertIfUnique. errs[i] is the error of
// docs[i] alone (bad id, bad attributes, id repeated in the batch); err is a
// failure of the whole call (bad k, store down), in which case nothing of the
// batch was acknowledged.
//
// The phases: prepare (validate and order the documents), lock the ids and
// read their stored versions, lock every row the batch reads or writes,
// look up the candidates, decide each document, write. The locks are
// held from before the lookup until the writes are acknowledged: an
// insert that locks a row after this one sees what this one wrote.
func (ix *Index) InsertBatch(ctx context.Context, docs []Document, mode InsertMode, k int) (results []InsertResult, errs []error, err error) {
	if err := ix.checkK(k); err != nil {
		return nil, nil, err
	}
	if mode != InsertAlways && mode != InsertIfUnique {
		return nil, nil, fmt.Errorf("%w: unknown insert mode %d", ErrBadDocument, mode)
	}
	b := ix.prepareInsert(docs, mode, k)
	if len(b.order) == 0 {
		return b.results, b.errs, nil
	}
	// The ids first: their stored versions say which other rows the batch
	// changes (a replaced version's), and must not change before the
	// writes.
	unlockIDs, err := ix.lock(ctx, b.idLocks)
	if err != nil {
		return nil, nil, err
	}
	defer unlockIDs()
	if err := b.readStored(ctx); err != nil {
		return nil, nil, err
	}
	b.gatherRows()
	if len(b.order) == 0 {
		return b.results, b.errs, nil
	}
	// Then the rows (after the ids, as every operation takes them).
	unlockRows, err := ix.lock(ctx, b.rowLocks)
	if err != nil {
		return nil, nil, err
	}
	defer unlockRows()
	if err := b.lookup(ctx); err != nil {
		return nil, nil, err
	}
	if err := b.decide(ctx); err != nil {
		return nil, nil, err
	}
	if len(b.stored) == 0 {
		ix.countInserts(b.results, b.errs)
		return b.results, b.errs, nil
	}
	if err := ix.writeInsert(ctx, b.mutations(), b.idLocks, b.rowLocks); err != nil {
		return nil, nil, err
	}
	ix.countInserts(b.results, b.errs)
	return b.results, b.errs, nil
}

// writeInsert applies an insert's mutations (in the order of
// insertBatch.mutations) and releases the locks of sets with the last of
// them. On a store with MutateUnordered the index, fp and band cells go
// first, all at once, then the docs cells, then the counters with the
// release. The order among the first three does not matter: a lookup
// reaches an fp row only through an index cell, so a document becomes
// findable by fingerprint when both are written, whichever lands first;
// a band cell leads to a document only through its docs cell (a band
// candidate without one is dropped), which is still written after them.
// Writing them together saves two round trips, each a write-ahead-log
// sync on HBase.
func (ix *Index) writeInsert(ctx context.Context, muts []storage.Mutation, sets ...lockSet) error {
	um, ok := ix.st.(storage.UnorderedMutator)
	if !ok {
		return ix.mutateReleasing(ctx, muts, sets...)
	}
	var first, rest []storage.Mutation
	for _, m := range muts {
		if m.Table == storage.TableDocs || m.Table == storage.TableMeta {
			rest = append(rest, m)
		} else {
			first = append(first, m)
		}
	}
	if len(first) > 0 {
		if ix.closed.Load() {
			return ErrClosed
		}
		start := time.Now()
		err := um.MutateUnordered(ctx, first)
		ix.m.observeStore("mutate", start, err)
		if err != nil {
			return storeErr(err)
		}
	}
	return ix.mutateReleasing(ctx, rest, sets...)
}

// insertBatch is the state of one InsertBatch call, phase by phase.
type insertBatch struct {
	ix   *Index
	mode InsertMode
	k    int
	// docs are the caller's documents, copied and completed (time,
	// stored band signature); results and errs are the answer, by
	// position in docs.
	docs    []Document
	results []InsertResult
	errs    []error
	// order lists the positions of the documents still to decide, in
	// (time, id) order.
	order []int

	// idLocks locks the ids of the documents in order (as prepared);
	// old holds the stored versions of those ids (readStored).
	idLocks lockSet
	old     map[string]Document

	// Set by gatherRows, for the documents in order: rowLocks locks every
	// row the batch reads or writes; newFPs and newBands are the queries
	// of the lookup, one per document; touched lists the fingerprints
	// whose fp rows the batch may change (new and replaced ones).
	rowLocks lockSet
	newFPs   []fingerprint.Fingerprint
	newBands []fingerprint.Bands
	touched  []uint64
	// useBands: band rows are candidates too (the index keeps them and
	// a Confirm judges what they find).
	useBands bool

	// Set by lookup: cands[n] are the candidate fingerprints of
	// docs[order[n]], keyDocs[n] its text keys' document counts, overall
	// and in its source (nil without band rows), bandDocs the documents found in band rows,
	// state the documents carrying each candidate and touched
	// fingerprint, and before whether a touched fingerprint was carried
	// before the batch.
	cands    [][]uint64
	keyDocs  []KeyCounts
	bandDocs map[string]Document
	state    map[uint64][]fpEntry
	before   map[uint64]bool

	// storedDocs holds the candidates' docs cells (set by lookup) and
	// the documents stored so far (by decide); corruptDocs the
	// candidates whose docs cell does not decode.
	storedDocs  map[string]Document
	corruptDocs map[string]bool

	// Set by decide: stored lists the positions of the documents stored,
	// in order.
	stored []int
}

// prepareInsert copies docs (the caller's stay untouched) and prepares
// each: a zero Time becomes now, and the document keeps what this index
// stores (its band signature when it keeps band rows, its short text when
// its format has text cells). A document that is invalid or repeats an
// earlier one's id gets its error; the others are ordered by (time, id).
func (ix *Index) prepareInsert(docs []Document, mode InsertMode, k int) *insertBatch {
	b := &insertBatch{ix: ix, mode: mode, k: k, results: make([]InsertResult, len(docs)), errs: make([]error, len(docs))}
	now := time.Now().UTC()
	b.docs = slices.Clone(docs)
	firstIdx := make(map[string]int, len(docs))
	for i := range b.docs {
		d := &b.docs[i]
		if d.Time.IsZero() {
			d.Time = now
		}
		d.Time = d.Time.UTC()
		d.Bands = ix.storedBands(d.Bands, d.Chars)
		if !ix.text {
			d.Text = "" // an index of format 1 or 2 has no 0x04 cells
		}
		if b.errs[i] = d.validate(); b.errs[i] != nil {
			continue
		}
		if j, dup := firstIdx[d.ID]; dup {
			b.errs[i] = fmt.Errorf("%w: id %q appears more than once in the batch (items %d and %d)", ErrBadDocument, d.ID, j, i)
			continue
		}
		firstIdx[d.ID] = i
		b.order = append(b.order, i)
	}
	slices.SortFunc(b.order, func(x, y int) int {
		if c := b.docs[x].Time.Compare(b.docs[y].Time); c != 0 {
			return c
		}
		if b.docs[x].ID < b.docs[y].ID {
			return -1
		}
		return 1
	})
	b.idLocks = lockSet{kind: lockKindID}
	for _, i := range b.order {
		b.idLocks.hashes = append(b.idLocks.hashes, idHash(b.docs[i].ID))
	}
	return b
}

// readStored reads the stored versions of the ids (under their locks). A
// document whose stored version is unreadable (a corrupt docs cell) gets
// that error and leaves the batch.
func (b *insertBatch) readStored(ctx context.Context) error {
	old, oldErrs, err := b.ix.readDocs(ctx, b.docs, b.order)
	if err != nil {
		return err
	}
	b.old = old
	for i, e := range oldErrs {
		b.errs[i] = e
	}
	b.order = slices.DeleteFunc(b.order, func(i int) bool { return b.errs[i] != nil })
	return nil
}

// gatherRows lists the rows to lock before the lookup, and the lookup's
// queries. Two fingerprints within K share the index row of at least one
// table, so two racing near-duplicate inserts both lock that row and the
// second sees the first. The index rows are locked in every mode: the
// delta and tombstone cells written depend on whether a document carried
// the fingerprint before (read under the lock), and compaction rewrites
// a row under the same lock.
//
// With bands (and a Confirm to judge what they find), InsertIfUnique
// locks the band and text-key rows of the new documents too, and of a
// replaced version: two near-copies that could find each other through
// a band share that band's row, so the second to lock it sees the first.
// InsertAlways does not: it stores the document whatever it finds, and
// the band cells it writes and removes are its own id's (under the id
// lock), so the only effect of those locks would be that a near-copy
// inserted concurrently, found only through a band, is reported among its
// duplicates. Skipping them (about 36 of the 41 locks of a text
// document; on HBase each lock is a conditional write to take and one to
// release) is what lets batch inserts keep up. Racing InsertIfUnique
// documents still lock every row they read, so exactly one of them is
// stored whatever InsertAlways writes meanwhile: an InsertAlways document
// is either visible to their lookups or written after them.
func (b *insertBatch) gatherRows() {
	ix := b.ix
	b.useBands = ix.bands && ix.cfg.Confirm != nil
	lockBands := b.mode == InsertIfUnique
	b.rowLocks = lockSet{kind: lockKindRow}
	for _, i := range b.order {
		d := &b.docs[i]
		b.rowLocks.hashes = ix.appendRowHashes(b.rowLocks.hashes, d.Fingerprint)
		if lockBands {
			b.rowLocks.hashes = appendBandRowHashes(b.rowLocks.hashes, d.Bands)
		}
		b.newFPs = append(b.newFPs, d.Fingerprint)
		b.newBands = append(b.newBands, d.Bands)
		b.touched = append(b.touched, uint64(d.Fingerprint))
		if o, ok := b.old[d.ID]; ok {
			b.rowLocks.hashes = ix.appendRowHashes(b.rowLocks.hashes, o.Fingerprint)
			if ix.bands && lockBands {
				b.rowLocks.hashes = appendBandRowHashes(b.rowLocks.hashes, o.Bands)
			}
			b.touched = append(b.touched, uint64(o.Fingerprint))
		}
	}
}

// lookup finds each document's candidates (under the row locks): the
// stored fingerprints within k in the index rows, the documents in its
// band rows, and which documents carry each candidate and touched
// fingerprint now.
func (b *insertBatch) lookup(ctx context.Context) error {
	ix := b.ix
	newBands := b.newBands
	var sources []string
	if !b.useBands {
		newBands = nil
	} else if ix.sourceAttr != "" {
		// The rows scoped to each document's source are read for their
		// counts, not locked: they name no candidates (the overall rows,
		// locked, do), so a racing insert of the same source can only be
		// one document short in a count.
		sources = make([]string, len(b.order))
		for n, i := range b.order {
			sources[n] = ix.SourceOf(b.docs[i].Attrs)
		}
	}
	cands, _, byBand, keyDocs, err := ix.candidates(ctx, b.newFPs, newBands, sources, b.k, bucketWindow{0, 1<<32 - 1})
	if err != nil {
		return err
	}
	// Documents found in band rows join the candidates through their
	// current fingerprints (read from their docs cells): from there on they
	// are decided like index candidates, by Confirm, at their distance.
	bandDocs, err := ix.bandCandidateDocs(ctx, byBand, cands)
	if err != nil {
		return err
	}
	var all []uint64
	for _, c := range cands {
		all = append(all, c...)
	}
	all = append(all, b.touched...)
	state, err := ix.readFPs(ctx, all)
	if err != nil {
		return err
	}
	// The docs cells of every document on those fingerprints: for
	// Confirm, and because the state holds committed documents only
	// (Index.committed), as every lookup sees them. A fingerprint only
	// uncommitted entries carry is not carried: its counter and
	// tombstones follow the documents.
	// On a store whose Mutate is atomic every entry is committed, and
	// the docs are read for Confirm only.
	switch {
	case !ix.atomic || ix.cfg.Confirm != nil:
		if b.storedDocs, b.corruptDocs, err = ix.candidateDocs(ctx, state, bandDocs); err != nil {
			return err
		}
	default:
		b.storedDocs = map[string]Document{}
	}
	if !ix.atomic {
		ix.dropUncommitted(state, func(id string) (uint64, bool, bool) {
			if b.corruptDocs[id] {
				return 0, true, false
			}
			d, ok := b.storedDocs[id]
			return uint64(d.Fingerprint), ok, true
		})
	}
	b.before = make(map[uint64]bool, len(b.touched))
	for _, f := range b.touched {
		b.before[f] = len(state[f]) > 0
	}
	b.cands, b.keyDocs, b.bandDocs, b.state = cands, keyDocs, bandDocs, state
	return nil
}

// decide decides each document in (time, id) order against the evolving
// state: a document stored is a candidate of the later ones it is near,
// and a replaced version no longer carries its fingerprint.
func (b *insertBatch) decide(ctx context.Context) error {
	for n, i := range b.order {
		var keys KeyCounts
		if b.keyDocs != nil {
			keys = b.keyDocs[n]
		}
		d := b.docs[i]
		dups := b.duplicates(d, b.candidateFPs(d, b.cands[n]), keys)
		r := InsertResult{Duplicates: dups}
		for j := range dups {
			if r.Original == nil || earlier(dups[j], *r.Original) {
				h := dups[j]
				r.Original = &h
			}
		}
		r.Stored = b.mode == InsertAlways || len(dups) == 0
		if r.Stored {
			r.Replaced = b.store(i)
		}
		b.results[i] = r
	}
	return nil
}

// candidateFPs are the fingerprints d is compared with: its candidates
// from the lookup, and those of the documents stored earlier in this
// batch that are within k of it or share a band with it.
func (b *insertBatch) candidateFPs(d Document, fps []uint64) []uint64 {
	for _, j := range b.stored {
		f := uint64(b.docs[j].Fingerprint)
		near := bits.OnesCount64(f^uint64(d.Fingerprint)) <= b.k || b.useBands && fingerprint.SharesBand(b.docs[j].Bands, d.Bands)
		if near && !slices.Contains(fps, f) {
			fps = append(fps, f)
		}
	}
	return fps
}

// duplicates are the documents carrying the fingerprints fps (other than
// d's own id) that Confirm, when set, judges duplicates of d, sorted like
// lookup hits. keys are d's text keys' document counts, for Confirm.
func (b *insertBatch) duplicates(d Document, fps []uint64, keys KeyCounts) []Hit {
	confirm := b.ix.cfg.Confirm
	var dups []Hit
	var judge func(stored Document, distance int) bool
	if confirm != nil {
		judge = confirm(d, keys, b.k)
	}
	for _, f := range fps {
		for _, e := range b.state[f] {
			if e.id == d.ID {
				continue
			}
			if confirm != nil {
				sd, ok := b.storedDocs[e.id]
				if !ok {
					// A docs cell that does not decode (the state holds
					// committed documents only): judged on its bare
					// fingerprint, the cell's fault counted where it was read.
					sd = Document{ID: e.id, Fingerprint: fingerprint.Fingerprint(f), Time: e.time}
				}
				if !judge(sd, bits.OnesCount64(f^uint64(d.Fingerprint))) {
					continue
				}
			}
			dups = append(dups, Hit{ID: e.id, Fingerprint: fingerprint.Fingerprint(f), Distance: bits.OnesCount64(f ^ uint64(d.Fingerprint)), Time: e.time,
				Exact: f == uint64(d.Fingerprint) && d.ExactHash != 0 && e.exact == d.ExactHash})
		}
	}
	slices.SortFunc(dups, hitCmp)
	return dups
}

// store records docs[i] as stored in the state the later documents are
// decided against, and reports whether it replaces a stored version.
func (b *insertBatch) store(i int) (replaced bool) {
	d := b.docs[i]
	if o, ok := b.old[d.ID]; ok {
		replaced = true
		b.state[uint64(o.Fingerprint)] = slices.DeleteFunc(b.state[uint64(o.Fingerprint)], func(e fpEntry) bool { return e.id == d.ID })
	}
	b.state[uint64(d.Fingerprint)] = append(b.state[uint64(d.Fingerprint)], fpEntry{id: d.ID, time: d.Time, exact: d.ExactHash})
	b.stored = append(b.stored, i)
	b.storedDocs[d.ID] = d
	return replaced
}

// mutations are the writes of the stored documents, ordered so that a
// store without multi-row atomicity never exposes a document whose
// fingerprint is not findable: index cells first, then fp cells, then
// band cells, then docs; removals after additions; the counters last.
func (b *insertBatch) mutations() []storage.Mutation {
	adds := b.indexAdds()
	for _, i := range b.stored {
		d := b.docs[i]
		adds = append(adds, storage.Mutation{Kind: storage.Put, Table: storage.TableFP, Row: FPRowKey(uint64(d.Fingerprint)), Qualifier: []byte(d.ID), Value: encodeFPCell(d.Time, d.ExactHash, b.ix.compact)})
	}
	for _, i := range b.stored {
		d := b.docs[i]
		adds = append(adds, b.ix.bandPuts(d, b.ix.buckets.Start(b.ix.buckets.Of(d.Time)))...)
	}
	for _, i := range b.stored {
		d := b.docs[i]
		adds = append(adds, storage.Mutation{Kind: storage.Put, Table: storage.TableDocs, Row: []byte(d.ID), Qualifier: docQualifier, Value: encodeDoc(d, b.ix.compact)})
	}
	removes, newDocs := b.replacedCells()
	removes, fpDelta := b.fpChanges(removes)
	muts := append(adds, removes...)
	return append(muts, b.ix.counterMuts(newDocs, fpDelta)...)
}

// indexAdds are the index cells of the stored documents: a delta cell in
// each table's row, and the deletion of the tombstone a fingerprint no
// document carried before may have there.
func (b *insertBatch) indexAdds() []storage.Mutation {
	var adds []storage.Mutation
	for _, i := range b.stored {
		d := b.docs[i]
		bucket := b.ix.buckets.Of(d.Time)
		ts := b.ix.buckets.Start(bucket)
		for t, p := range b.ix.perms {
			v := p.Permute(d.Fingerprint)
			row := IndexRowKey(nil, t, p.Prefix(v), p.PrefixBits)
			adds = append(adds, storage.Mutation{Kind: storage.Put, Table: storage.TableIndex, Row: row, Qualifier: deltaQualifier(bucket, p.Residual(v)), Value: []byte{}, Timestamp: ts})
			if !b.before[uint64(d.Fingerprint)] {
				adds = append(adds, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableIndex, Row: row, Qualifier: tombstoneQualifier(p.Residual(v))})
			}
		}
	}
	return adds
}

// replacedCells are the removals of the replaced versions' cells that the
// new versions do not overwrite: the fp cell of a changed fingerprint and
// the band cells the new signature does not have. newDocs counts the
// stored documents that replace nothing.
func (b *insertBatch) replacedCells() (removes []storage.Mutation, newDocs int64) {
	for _, i := range b.stored {
		d := b.docs[i]
		o, ok := b.old[d.ID]
		if !ok {
			newDocs++
			continue
		}
		if o.Fingerprint != d.Fingerprint {
			removes = append(removes, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableFP, Row: FPRowKey(uint64(o.Fingerprint)), Qualifier: []byte(d.ID)})
		}
		removes = append(removes, b.ix.bandDeletes(o, &d)...)
	}
	return removes, newDocs
}

// fpChanges compares, for each touched fingerprint, whether a document
// carries it after the batch with before it: fpDelta is the change of the
// fingerprint counter, and a fingerprint no document carries any more
// gets its tombstones, appended to removes.
func (b *insertBatch) fpChanges(removes []storage.Mutation) ([]storage.Mutation, int64) {
	var fpDelta int64
	seen := make(map[uint64]bool, len(b.touched))
	for _, f := range b.touched {
		if seen[f] {
			continue
		}
		seen[f] = true
		after := len(b.state[f]) > 0
		switch {
		case after && !b.before[f]:
			fpDelta++
		case !after && b.before[f]:
			fpDelta--
			removes = append(removes, b.ix.tombstones(fingerprint.Fingerprint(f))...)
		}
	}
	return removes, fpDelta
}

func (ix *Index) countInserts(results []InsertResult, errs []error) {
	for i, r := range results {
		switch {
		case errs[i] != nil:
		case !r.Stored:
			ix.m.inserts.WithLabelValues("duplicate").Inc()
		case r.Replaced:
			ix.m.inserts.WithLabelValues("replaced").Inc()
		default:
			ix.m.inserts.WithLabelValues("stored").Inc()
		}
	}
}

func (ix *Index) appendRowHashes(dst []uint64, fp fingerprint.Fingerprint) []uint64 {
	for t, p := range ix.perms {
		dst = append(dst, rowHash(t, p.Prefix(p.Permute(fp))))
	}
	return dst
}

func (ix *Index) tombstones(fp fingerprint.Fingerprint) []storage.Mutation {
	muts := make([]storage.Mutation, 0, len(ix.perms))
	for t, p := range ix.perms {
		v := p.Permute(fp)
		muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableIndex, Row: IndexRowKey(nil, t, p.Prefix(v), p.PrefixBits), Qualifier: tombstoneQualifier(p.Residual(v)), Value: []byte{}})
	}
	return muts
}

// counterMuts adds an insert group's or a delete's docs and fps to the
// counters: to the counters row, or in an index of format 8 to the next
// of its CounterShards rows, so that no one row takes every group's
// increment (see FormatVersion).
func (ix *Index) counterMuts(docs, fps int64) []storage.Mutation {
	row := countersRow
	if ix.shardCounters {
		row = CounterShardRow(int(ix.counterSeq.Add(1) % CounterShards))
	}
	return counterAdds(row, docs, fps)
}

// counterAdds adds docs and fps to the counters in meta row row.
func counterAdds(row []byte, docs, fps int64) []storage.Mutation {
	var muts []storage.Mutation
	if docs != 0 {
		muts = append(muts, storage.Mutation{Kind: storage.Add, Table: storage.TableMeta, Row: row, Qualifier: qualDocuments, Delta: docs})
	}
	if fps != 0 {
		muts = append(muts, storage.Mutation{Kind: storage.Add, Table: storage.TableMeta, Row: row, Qualifier: qualFingerprints, Delta: fps})
	}
	return muts
}

// Delete removes the document with the id. Its fingerprint leaves the index
// rows (as tombstones, until compaction folds them) when no other document
// carries it.
func (ix *Index) Delete(ctx context.Context, id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	unlockID, err := ix.lock(ctx, lockSet{kind: lockKindID, hashes: []uint64{idHash(id)}})
	if err != nil {
		return err
	}
	defer unlockID()
	d, err := ix.Get(ctx, id)
	if err != nil {
		return err
	}
	rowHashes := ix.appendRowHashes(nil, d.Fingerprint)
	if ix.bands {
		rowHashes = appendBandRowHashes(rowHashes, d.Bands)
	}
	unlockRows, err := ix.lock(ctx, lockSet{kind: lockKindRow, hashes: rowHashes})
	if err != nil {
		return err
	}
	defer unlockRows()
	state, err := ix.readFPs(ctx, []uint64{uint64(d.Fingerprint)})
	if err != nil {
		return err
	}
	// The other committed documents on the fingerprint: when there are
	// none, its index entries get tombstones and the counter drops.
	if err := ix.committed(ctx, state, func(e fpEntry) bool { return e.id != id }); err != nil {
		return err
	}
	others := state[uint64(d.Fingerprint)]
	muts := []storage.Mutation{
		// A docs row has one cell: deleting the cell (not the row) avoids a
		// range deletion, which the embedded store pays for on every later read.
		{Kind: storage.DeleteCell, Table: storage.TableDocs, Row: []byte(id), Qualifier: docQualifier},
		{Kind: storage.DeleteCell, Table: storage.TableFP, Row: FPRowKey(uint64(d.Fingerprint)), Qualifier: []byte(id)},
	}
	muts = append(muts, ix.bandDeletes(d, nil)...)
	var fpDelta int64
	if len(others) == 0 {
		fpDelta = -1
		muts = append(muts, ix.tombstones(d.Fingerprint)...)
	}
	muts = append(muts, ix.counterMuts(-1, fpDelta)...)
	return ix.mutateReleasing(ctx, muts, lockSet{kind: lockKindID, hashes: []uint64{idHash(id)}}, lockSet{kind: lockKindRow, hashes: rowHashes})
}
