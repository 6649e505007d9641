package kvindex

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/storage"
)

// The bands table (TableBands) is the MinHash-LSH candidate stage: a text
// document with band signature (h_0 .. h_31) has one empty cell, qualifier =
// its id, in each row BandRowKey(i, h_i). Two documents whose feature sets
// have Jaccard J share a row with probability 1 - (1 - J^4)^32 (0.988 at
// J = 0.6), whatever their simhash distance, so a lookup that reads the
// query's 32 band rows next to its T index rows finds the near-copies the
// pigeonhole rows miss; Config.Confirm (the decision rule) then judges them
// by their sketches.

// bandRowHash is the lock hash of a band row. It shares the row-lock space
// with index rows (table ids there are < 256, the band row uses a distinct
// tag), so one sorted lock set covers both.
func bandRowHash(band int, h uint64) uint64 {
	x := (uint64(0xB0|band>>8)<<56 ^ uint64(band)<<48 ^ h) * 0x9E3779B97F4A7C15
	return x ^ x>>31
}

// appendBandRowHashes appends the lock hashes of b's band rows (text keys
// included).
func appendBandRowHashes(dst []uint64, b fingerprint.Bands) []uint64 {
	for i, h := range b {
		dst = append(dst, bandRowHash(fingerprint.BandOf(i), h))
	}
	return dst
}

// TextKeyMaxDocs is the document frequency above which a text-key row is
// boilerplate: a lookup takes no candidates from a text-key row holding
// more documents than this (a sentence that many texts share, such as a
// site's standard notice, says nothing about which of them a query
// copies; the LSH bands and the index rows still find near-copies of the
// whole text). Each candidate costs a docs-cell read and an alignment.
const TextKeyMaxDocs = 32

// SourceKeyBand is the band index of source-scoped text-key rows (format
// 7): the row of SourceTextKey(source, key) holds the documents of that
// source that keyed the sentence, so its count is the sentence's document
// frequency within the source. One past fingerprint.TextKeyBand, so a
// scoped row never collides with a band or an overall text-key row.
const SourceKeyBand = fingerprint.TextKeyBand + 1

// SourceTextKey is the row hash of text key k scoped to source (a
// document's Config.SourceAttr value): xxhash64 of the source's length
// (uvarint), the source and k (big-endian), so two sources, or a source
// that is a prefix of another, never share a row.
func SourceTextKey(source string, k uint64) uint64 {
	var buf [binary.MaxVarintLen64 + 8]byte
	d := xxhash.New()
	_, _ = d.Write(binary.AppendUvarint(buf[:0], uint64(len(source))))
	_, _ = d.WriteString(source)
	_, _ = d.Write(binary.BigEndian.AppendUint64(buf[:0], k))
	return d.Sum64()
}

// SourceAttr is the attribute naming a document's source in this index
// ("" when it keeps no source-scoped rows: Config.SourceAttr).
func (ix *Index) SourceAttr() string { return ix.sourceAttr }

// SourceOf is the source a document with these attributes is scoped to
// ("" for none, or when the index keeps no source-scoped rows).
func (ix *Index) SourceOf(attrs map[string]string) string {
	if ix.sourceAttr == "" || len(attrs) == 0 {
		return ""
	}
	return attrs[ix.sourceAttr]
}

// sourceOfQuery is the source a query's scoped rows are read for: its
// own, when the index keeps them and it looks up text keys (b: what it
// looks up, queryBands).
func (ix *Index) sourceOfQuery(source string, b fingerprint.Bands) string {
	if ix.sourceAttr == "" || len(b) <= fingerprint.NumBands {
		return ""
	}
	return source
}

// rowKeyMax bounds the length of index and band row keys (keys.go).
const rowKeyMax = 9

// rowKeyID is a row key of at most rowKeyMax bytes as a comparable value
// (length, then bytes), for deduplicating the rows of a batch in a map
// without allocating a string per row.
type rowKeyID [rowKeyMax + 1]byte

func makeRowKeyID(k []byte) rowKeyID {
	var id rowKeyID
	id[0] = byte(len(k))
	copy(id[1:], k)
	return id
}

// appendBandKeys appends the band-row keys of every query with a band
// signature to keys and returns, per query, the positions in keys of its
// band rows in the order of its Bands (LSH bands, then text keys; none for
// a query without bands). Rows shared by several queries of a batch are
// read once. It returns nil when the index has no bands or bands is nil.
// An index without text keys (format before 4) reads the LSH bands only.
func (ix *Index) appendBandKeys(keys *[]storage.RowKey, bands []fingerprint.Bands) [][]int {
	if !ix.bands || bands == nil {
		return nil
	}
	pos := make([][]int, len(bands))
	n, withBands := 0, 0
	for _, b := range bands {
		b = ix.queryBands(b)
		n += len(b)
		if len(b) > 0 {
			withBands++
		}
	}
	// One buffer for all keys and positions; a map only when several
	// queries could share a row (one query's LSH rows differ in their band
	// byte, its text keys are distinct).
	kbuf := make([]byte, n*bandRowKeyLen)
	pbuf := make([]int, n)
	var slot map[rowKeyID]int
	if withBands > 1 {
		slot = make(map[rowKeyID]int, n)
	}
	for i, b := range bands {
		b = ix.queryBands(b)
		if len(b) == 0 {
			continue
		}
		pos[i], pbuf = pbuf[:len(b):len(b)], pbuf[len(b):]
		for j, h := range b {
			k := kbuf[:bandRowKeyLen:bandRowKeyLen]
			putBandRowKey(k, fingerprint.BandOf(j), h)
			s := len(*keys)
			if slot != nil {
				id := makeRowKeyID(k)
				if prev, ok := slot[id]; ok {
					s = prev
				} else {
					slot[id] = s
				}
			}
			if s == len(*keys) {
				*keys = append(*keys, storage.RowKey{Table: storage.TableBands, Key: k})
				kbuf = kbuf[bandRowKeyLen:]
			}
			pos[i][j] = s
		}
	}
	return pos
}

// sourceKeyDocs fills keyDocs[i].Source for every query with a source
// (sources[i]; sources nil for none) and text keys: the number of the
// source's documents in the scoped row of each key whose count there can
// make it template (one store call for all queries). A scoped cell is
// written and removed with its document's overall cell, so a key's count
// in its source is at most its overall count, and the rule (decide.Rule.
// TemplateKeys on these counts) takes a key for template only when at
// least Config.SourceKeyMinDocs documents hold it and at least a ratio
// times the text's rarest count, plus one. So:
//
//   - a key no document holds counts 0 there, without a read;
//   - when some key is held by no document (the rarest count is 0), only
//     the keys at least SourceKeyMinDocs documents hold are read, and the
//     others are left out (they cannot be template);
//   - when no key is held by SourceKeyMinDocs documents, none is read;
//   - otherwise (every key held, as in a copy of a stored text) every
//     key's scoped row is read.
//
// A check of a new text, most of whose sentences no stored document holds,
// reads the scoped rows of its frequent sentences only.
func (ix *Index) sourceKeyDocs(ctx context.Context, bands []fingerprint.Bands, sources []string, keyDocs []KeyCounts) error {
	if sources == nil || keyDocs == nil || ix.sourceAttr == "" {
		return nil
	}
	minDocs := max(ix.cfg.SourceKeyMinDocs, 1)
	var rks []storage.RowKey
	type want struct {
		query int
		key   uint64
	}
	var wants []want
	at := map[uint64]int{} // scoped row hash -> position in rks
	for i, src := range sources {
		qb := ix.queryBands(bands[i])
		if src = ix.sourceOfQuery(src, qb); src == "" || keyDocs[i].Docs == nil {
			continue
		}
		keys := qb.TextKeys()
		unheld, frequent := false, false
		for _, k := range keys {
			n := keyDocs[i].Docs[k]
			unheld = unheld || n == 0
			frequent = frequent || n >= minDocs
		}
		keyDocs[i].Source = make(map[uint64]int, len(keys))
		for _, k := range keys {
			n := keyDocs[i].Docs[k]
			switch {
			case n == 0:
				keyDocs[i].Source[k] = 0
				continue
			case !frequent, unheld && n < minDocs:
				continue
			}
			h := SourceTextKey(src, k)
			if _, ok := at[h]; !ok {
				at[h] = len(rks)
				rks = append(rks, storage.RowKey{Table: storage.TableBands, Key: BandRowKey(SourceKeyBand, h)})
			}
			wants = append(wants, want{i, k})
		}
	}
	if len(rks) == 0 {
		return nil
	}
	rows, err := ix.get(ctx, rks)
	if err != nil {
		return err
	}
	for _, w := range wants {
		keyDocs[w.query].Source[w.key] = len(rows[at[SourceTextKey(sources[w.query], w.key)]].Cells)
	}
	return nil
}

// queryBands is the part of a query's band signature the index looks up:
// none unless it has the NumBands LSH bands, and no text keys in an index
// without them.
func (ix *Index) queryBands(b fingerprint.Bands) fingerprint.Bands {
	switch {
	case len(b) < fingerprint.NumBands:
		return nil
	case !ix.textKeys:
		return b.LSH()
	}
	return b
}

// KeyCounts is the number of stored documents in each text-key row of a
// text (its document frequency, by key): overall (Docs) and among the
// documents of the text's source (Source: the rows scoped to it; nil
// without a source or in an index without scoped rows). The decision rule
// takes a sentence many documents share for template, and one many of a
// source's documents share for that source's template.
type KeyCounts struct {
	Docs   map[uint64]int
	Source map[uint64]int
}

// bandIDs collects, per query, the distinct document ids in its band rows
// (text-key rows holding more than TextKeyMaxDocs documents skipped) and
// the number of documents in each of its text-key rows (KeyCounts.Docs).
func (ix *Index) bandIDs(rows []storage.Row, pos [][]int, bands []fingerprint.Bands) ([][]string, []KeyCounts, error) {
	n := len(bands)
	out := make([][]string, n)
	keyDocs := make([]KeyCounts, n)
	for i := range n {
		var ids []string
		qb := ix.queryBands(bands[i])
		if len(qb) > fingerprint.NumBands {
			keyDocs[i].Docs = make(map[uint64]int, len(qb)-fingerprint.NumBands)
		}
		for j, p := range pos[i] {
			if j >= fingerprint.NumBands {
				keyDocs[i].Docs[qb[j]] = len(rows[p].Cells)
			}
			if j >= fingerprint.NumBands && len(rows[p].Cells) > TextKeyMaxDocs {
				ix.m.boilerplateKeys.Inc()
				continue
			}
			for _, c := range rows[p].Cells {
				if err := ValidateID(string(c.Qualifier)); err != nil {
					ix.m.corrupt.Inc()
					return nil, nil, corrupt(storage.TableBands, rows[p].Key, c.Qualifier, "band cell qualifier is not a document id: %v", err)
				}
				ids = append(ids, string(c.Qualifier))
			}
		}
		slices.Sort(ids)
		out[i] = slices.Compact(ids)
	}
	return out, keyDocs, nil
}

// bandPuts returns the band cells of d (none when the index has no bands
// or d no band signature), its text keys' rows scoped to its source among
// them, stamped with the document's bucket start so a store with TTLs
// expires them with the document's index cells.
func (ix *Index) bandPuts(d Document, ts time.Time) []storage.Mutation {
	if !ix.bands || len(d.Bands) == 0 {
		return nil
	}
	src := ix.SourceOf(d.Attrs)
	n := len(d.Bands)
	if src != "" {
		n += len(d.Bands.TextKeys())
	}
	muts := make([]storage.Mutation, 0, n)
	for i, h := range d.Bands {
		muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableBands, Row: BandRowKey(fingerprint.BandOf(i), h), Qualifier: []byte(d.ID), Value: []byte{}, Timestamp: ts})
	}
	if src != "" {
		for _, h := range d.Bands.TextKeys() {
			muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableBands, Row: BandRowKey(SourceKeyBand, SourceTextKey(src, h)), Qualifier: []byte(d.ID), Value: []byte{}, Timestamp: ts})
		}
	}
	return muts
}

// bandDeletes returns the deletions of old's band cells (its scoped
// text-key cells among them) that the new version next (nil for a delete)
// does not put again.
func (ix *Index) bandDeletes(old Document, next *Document) []storage.Mutation {
	if !ix.bands {
		return nil
	}
	var nb fingerprint.Bands
	var nextSrc string
	if next != nil {
		nb, nextSrc = next.Bands, ix.SourceOf(next.Attrs)
	}
	var muts []storage.Mutation
	for i, h := range old.Bands {
		if keepsBand(nb, i, h) {
			continue
		}
		muts = append(muts, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableBands, Row: BandRowKey(fingerprint.BandOf(i), h), Qualifier: []byte(old.ID)})
	}
	if src := ix.SourceOf(old.Attrs); src != "" {
		for _, h := range old.Bands.TextKeys() {
			if src == nextSrc && slices.Contains(nb.TextKeys(), h) {
				continue
			}
			muts = append(muts, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableBands, Row: BandRowKey(SourceKeyBand, SourceTextKey(src, h)), Qualifier: []byte(old.ID)})
		}
	}
	return muts
}

// keepsBand reports whether next puts the band row of an old signature's
// band i with hash h again: the same LSH band, or the same text key
// wherever it stands among next's keys.
func keepsBand(next fingerprint.Bands, i int, h uint64) bool {
	if i < fingerprint.NumBands {
		return len(next) >= fingerprint.NumBands && next[i] == h
	}
	return slices.Contains(next.TextKeys(), h)
}

// Query is one document to look up with LookupDocuments.
type Query struct {
	Fingerprint fingerprint.Fingerprint
	// Bands is the document's band signature (nil: pigeonhole rows only),
	// with the text keys to look up after the NumBands LSH bands
	// (fingerprint.QueryTextKeys: a query may look up more keys than a
	// document stores).
	Bands fingerprint.Bands
	// ExactHash, when not zero, marks hits at distance 0 with the same
	// stored exact hash as Exact.
	ExactHash uint64
	// Source, when set and the index keeps source-scoped rows, also reads
	// the rows of the query's text keys scoped to this source
	// (DocLookupResult.SourceKeyDocs).
	Source string
}

// DocLookupResult is the answer to one query of LookupDocuments.
type DocLookupResult struct {
	// Hits are the documents found, sorted by distance, then time, then
	// id: those within the lookup's K of the fingerprint and, when the index
	// has bands, those sharing a band row with the query at any distance
	// (Distance is their true simhash distance, possibly above K). A hit
	// whose docs cell is gone (deleted since its rows were read) is left
	// out.
	Hits []Hit
	// Docs holds the stored document of every hit, by id.
	Docs map[string]Document
	// Candidates is the number of residuals examined in index rows.
	Candidates int
	// BandCandidates is the number of distinct documents in the query's
	// band rows.
	BandCandidates int
	// KeyDocs holds, for each text key the query looked up, the number of
	// documents in its row (its document frequency; the decision rule
	// takes a sentence many documents share for template). Nil when the
	// query looked up no text keys.
	KeyDocs map[uint64]int
	// SourceKeyDocs holds, for those keys whose count can make them
	// template in the query's Source (see Config.SourceKeyMinDocs), the
	// number of the source's documents in its scoped row (a source's own
	// template). Nil without a source or in an index without scoped rows.
	SourceKeyDocs map[uint64]int
}

// LookupDocuments looks up documents for a second check by the caller: it
// reads the queries' index rows and, when the index has bands, their band
// rows in one store call, the candidate fingerprints' fp rows in a second,
// and the docs cells of every candidate document in a third, and returns
// the hits with their stored documents (sketch, length) for the decision
// rule. opt.Limit is not applied (the caller's rule decides which hits
// count, then limits); opt.ExactHash is ignored in favour of each query's.
// A corrupt docs cell is an error wrapping ErrCorrupt.
func (ix *Index) LookupDocuments(ctx context.Context, qs []Query, opt LookupOptions) ([]DocLookupResult, error) {
	if err := ix.checkK(opt.K); err != nil {
		return nil, err
	}
	if !opt.Since.IsZero() && !opt.Until.IsZero() && opt.Until.Before(opt.Since) {
		return nil, fmt.Errorf("%w: until %s is before since %s", ErrBadOptions, opt.Until.Format(time.RFC3339), opt.Since.Format(time.RFC3339))
	}
	for i, q := range qs {
		if err := q.Bands.ValidateQuery(); err != nil {
			return nil, fmt.Errorf("%w: query %d: %w", ErrBadOptions, i, err)
		}
	}
	fps := make([]fingerprint.Fingerprint, len(qs))
	bands := make([]fingerprint.Bands, len(qs))
	var sources []string
	for i, q := range qs {
		fps[i], bands[i] = q.Fingerprint, q.Bands
		if q.Source != "" {
			if sources == nil {
				sources = make([]string, len(qs))
			}
			sources[i] = q.Source
		}
	}
	win := ix.window(opt.Since, opt.Until)
	cands, examined, byBand, keyDocs, err := ix.candidates(ctx, fps, bands, sources, opt.K, win)
	if err != nil {
		return nil, err
	}
	fpRows, err := ix.readFPRows(ctx, cands)
	if err != nil {
		return nil, err
	}
	inWindow := func(t time.Time) bool {
		return (opt.Since.IsZero() || !t.Before(opt.Since)) && (opt.Until.IsZero() || t.Before(opt.Until))
	}
	// One multi-get of every candidate document of every query.
	idSet := map[string]bool{}
	var ids []string
	addID := func(id string) {
		if !idSet[id] {
			idSet[id] = true
			ids = append(ids, id)
		}
	}
	for i := range qs {
		for _, c := range cands[i] {
			for _, e := range fpRows[c] {
				if inWindow(e.time) {
					addID(e.id)
				}
			}
		}
		if byBand != nil {
			for _, id := range byBand[i] {
				addID(id)
			}
		}
	}
	docs, err := ix.Documents(ctx, ids)
	if err != nil {
		return nil, err
	}
	// Only committed documents are hits (Index.committed): an fp entry
	// whose docs cell is gone or carries another fingerprint is passed
	// over here as on every route.
	for f, es := range fpRows {
		fpRows[f] = slices.DeleteFunc(es, func(e fpEntry) bool { return !inWindow(e.time) })
	}
	ix.dropUncommitted(fpRows, func(id string) (uint64, bool, bool) {
		d, ok := docs[id]
		return uint64(d.Fingerprint), ok, true
	})
	out := make([]DocLookupResult, len(qs))
	for i, q := range qs {
		r := DocLookupResult{Docs: map[string]Document{}, Candidates: examined[i]}
		if keyDocs != nil {
			r.KeyDocs, r.SourceKeyDocs = keyDocs[i].Docs, keyDocs[i].Source
		}
		add := func(d Document) {
			if _, dup := r.Docs[d.ID]; dup || !inWindow(d.Time) {
				return
			}
			r.Docs[d.ID] = d
			dist := bits.OnesCount64(uint64(q.Fingerprint ^ d.Fingerprint))
			r.Hits = append(r.Hits, Hit{ID: d.ID, Fingerprint: d.Fingerprint, Distance: dist, Time: d.Time,
				Exact: dist == 0 && q.ExactHash != 0 && d.ExactHash == q.ExactHash})
		}
		for _, c := range cands[i] {
			for _, e := range fpRows[c] {
				add(docs[e.id])
			}
		}
		if byBand != nil {
			r.BandCandidates = len(byBand[i])
			for _, id := range byBand[i] {
				if d, ok := docs[id]; ok {
					add(d)
				}
			}
			ix.m.bandCandidates.Observe(float64(r.BandCandidates))
		}
		slices.SortFunc(r.Hits, hitCmp)
		ix.m.candidates.Observe(float64(examined[i]))
		ix.m.hits.Observe(float64(len(r.Hits)))
		out[i] = r
	}
	return out, nil
}

// KeyQuery is a set of text keys to count (TextKeyCounts) and the source
// whose scoped rows to count them in ("" for none).
type KeyQuery struct {
	Keys   []uint64
	Source string
}

// TextKeyCounts returns, for each query (a stored document's
// Bands.TextKeys() and its SourceOf), the number of documents in each key's
// row and in its row scoped to the source: what LookupDocuments reports as
// KeyDocs and SourceKeyDocs for a query with those keys and that source. A
// route that judges stored documents against each other (a seen filter's
// near pairs, a load's dedup report) learns their template from it, as a
// check learns its query's. One store call; nil maps for empty sets, for
// an index without text-key rows, and (Source) without a source or scoped
// rows.
func (ix *Index) TextKeyCounts(ctx context.Context, qs []KeyQuery) ([]KeyCounts, error) {
	out := make([]KeyCounts, len(qs))
	if !ix.textKeys {
		return out, nil
	}
	var rks []storage.RowKey
	type rowID struct {
		band int
		h    uint64
	}
	at := map[rowID]int{}
	row := func(band int, h uint64) int {
		id := rowID{band, h}
		p, ok := at[id]
		if !ok {
			p = len(rks)
			at[id] = p
			rks = append(rks, storage.RowKey{Table: storage.TableBands, Key: BandRowKey(band, h)})
		}
		return p
	}
	pos := make([][]int, len(qs))
	for i, q := range qs {
		src := ""
		if ix.sourceAttr != "" {
			src = q.Source
		}
		for _, h := range q.Keys {
			pos[i] = append(pos[i], row(fingerprint.TextKeyBand, h))
		}
		if src != "" {
			for _, h := range q.Keys {
				pos[i] = append(pos[i], row(SourceKeyBand, SourceTextKey(src, h)))
			}
		}
	}
	if len(rks) == 0 {
		return out, nil
	}
	rows, err := ix.get(ctx, rks)
	if err != nil {
		return nil, err
	}
	for i, q := range qs {
		if len(q.Keys) == 0 {
			continue
		}
		out[i].Docs = make(map[uint64]int, len(q.Keys))
		for j, h := range q.Keys {
			out[i].Docs[h] = len(rows[pos[i][j]].Cells)
		}
		if len(pos[i]) > len(q.Keys) {
			out[i].Source = make(map[uint64]int, len(q.Keys))
			for j, h := range q.Keys {
				out[i].Source[h] = len(rows[pos[i][len(q.Keys)+j]].Cells)
			}
		}
	}
	return out, nil
}
