package bulkload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// planner computes a plan (plan.go) from what it is fed: every id's
// winning record with the records it supersedes, in id order (winner),
// then every fp cell the load writes, in (fingerprint, id) order
// (fpCell); finish reads what else it needs from the index. A load feeds
// it from its sorted runs (makePlan); the Spark backfill, through
// Planner, from its parts.
type planner struct {
	ix        Index
	freshDocs bool
	p         *plan
	cands     map[uint64]*cand
	skip      map[fpID]bool
	skipBand  map[bandID]bool
	// pending are winners whose stored version is to be read, with their
	// records (bands and attributes).
	pending     []fpID
	pendingDocs []kvindex.Document
	distinctIDs int64
	existing    int64
	winnersDone bool
	// newFPs are distinct winning fingerprints whose existence is to be
	// read; fpNew counts those the index has no row of.
	newFPs   []uint64
	fpNew    int64
	first    bool
	prev     uint64
	finished bool
}

type cand struct {
	winners int
}

func newPlanner(ix Index, freshDocs bool) *planner {
	return &planner{ix: ix, freshDocs: freshDocs, p: &plan{Version: planVersion}, cands: map[uint64]*cand{},
		skip: map[fpID]bool{}, skipBand: map[bandID]bool{}, first: true}
}

// winner takes id's winning record w and the records it supersedes.
func (pl *planner) winner(ctx context.Context, id string, w kvindex.Document, dropped []kvindex.Document) error {
	pl.distinctIDs++
	wfp := uint64(w.Fingerprint)
	for _, dd := range dropped {
		if d := uint64(dd.Fingerprint); d != wfp {
			pl.skip[fpID{d, id}] = true
			if pl.cands[d] == nil {
				pl.cands[d] = &cand{}
			}
		}
		for _, b := range goneBands(nil, id, dd, w, pl.ix.SourceOf) {
			pl.skipBand[b] = true
		}
	}
	if !pl.freshDocs {
		pl.pending = append(pl.pending, fpID{wfp, id})
		pl.pendingDocs = append(pl.pendingDocs, w)
		if len(pl.pending) >= getBatch {
			return pl.readStored(ctx)
		}
	}
	return nil
}

// readStored reads the stored versions of the pending winners.
func (pl *planner) readStored(ctx context.Context) error {
	if len(pl.pending) == 0 {
		return nil
	}
	p := pl.p
	keys := make([]storage.RowKey, len(pl.pending))
	for i, w := range pl.pending {
		keys[i] = storage.RowKey{Table: storage.TableDocs, Key: []byte(w.ID)}
	}
	rows, err := pl.ix.Store().Get(ctx, keys)
	if err != nil {
		return err
	}
	for i, r := range rows {
		if len(r.Cells) == 0 {
			continue
		}
		pl.existing++
		old, err := pl.ix.DecodeDocument(r)
		if err != nil {
			return err
		}
		p.DeleteBand = goneBands(p.DeleteBand, pl.pending[i].ID, old, pl.pendingDocs[i], pl.ix.SourceOf)
		if of := uint64(old.Fingerprint); of != pl.pending[i].FP {
			p.DeleteFP = append(p.DeleteFP, fpID{of, pl.pending[i].ID})
			if pl.cands[of] == nil {
				pl.cands[of] = &cand{}
			}
		}
	}
	pl.pending, pl.pendingDocs = pl.pending[:0], pl.pendingDocs[:0]
	return nil
}

// endWinners ends the winners: the last stored versions are read.
func (pl *planner) endWinners(ctx context.Context) error {
	if pl.winnersDone {
		return nil
	}
	pl.winnersDone = true
	if err := pl.readStored(ctx); err != nil {
		return err
	}
	p := pl.p
	p.NewDocs = pl.distinctIDs - pl.existing
	for k := range pl.skip {
		p.SkipFP = append(p.SkipFP, k)
	}
	for k := range pl.skipBand {
		p.SkipBand = append(p.SkipBand, k)
	}
	return nil
}

// fpCell takes a loaded fp cell: fingerprint f, document id. The cells of
// superseded records are left out.
func (pl *planner) fpCell(ctx context.Context, f uint64, id string) error {
	if err := pl.endWinners(ctx); err != nil {
		return err
	}
	if pl.skip[fpID{f, id}] {
		return nil
	}
	if c := pl.cands[f]; c != nil {
		c.winners++
	}
	if pl.first || f != pl.prev {
		pl.p.Fingerprints++
		if pl.freshDocs {
			pl.fpNew++
		} else if pl.newFPs = append(pl.newFPs, f); len(pl.newFPs) >= getBatch {
			if err := pl.readFPs(ctx); err != nil {
				return err
			}
		}
	}
	pl.first, pl.prev = false, f
	return nil
}

// readFPs counts the pending winning fingerprints the index has no row of.
func (pl *planner) readFPs(ctx context.Context) error {
	if len(pl.newFPs) == 0 {
		return nil
	}
	keys := make([]storage.RowKey, len(pl.newFPs))
	for i, f := range pl.newFPs {
		keys[i] = storage.RowKey{Table: storage.TableFP, Key: kvindex.FPRowKey(f)}
	}
	rows, err := pl.ix.Store().Get(ctx, keys)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if len(r.Cells) == 0 {
			pl.fpNew++
		}
	}
	pl.newFPs = pl.newFPs[:0]
	return nil
}

// finish reads the candidates (fingerprints that lost a carrier) and
// returns the plan.
func (pl *planner) finish(ctx context.Context) (*plan, error) {
	if pl.finished {
		return nil, errors.New("bulkload: plan: finished twice")
	}
	pl.finished = true
	if err := pl.endWinners(ctx); err != nil {
		return nil, err
	}
	if err := pl.readFPs(ctx); err != nil {
		return nil, err
	}
	p := pl.p
	deleted := map[fpID]bool{}
	for _, d := range p.DeleteFP {
		deleted[d] = true
	}
	var fps []uint64
	for f := range pl.cands {
		fps = append(fps, f)
	}
	slices.Sort(fps)
	for i := 0; i < len(fps); i += getBatch {
		part := fps[i:min(i+getBatch, len(fps))]
		stored := make([]storage.Row, len(part))
		if !pl.freshDocs {
			keys := make([]storage.RowKey, len(part))
			for j, f := range part {
				keys[j] = storage.RowKey{Table: storage.TableFP, Key: kvindex.FPRowKey(f)}
			}
			var err error
			if stored, err = pl.ix.Store().Get(ctx, keys); err != nil {
				return nil, err
			}
		}
		for j, f := range part {
			if pl.cands[f].winners > 0 {
				continue
			}
			p.NoIndex = append(p.NoIndex, f)
			before := len(stored[j].Cells)
			after := 0
			for _, c := range stored[j].Cells {
				if !deleted[fpID{f, string(c.Qualifier)}] && !pl.skip[fpID{f, string(c.Qualifier)}] {
					after++
				}
			}
			if before > 0 && after == 0 {
				p.Tombstone = append(p.Tombstone, f)
			}
		}
	}
	p.FPDelta = pl.fpNew - int64(len(p.Tombstone))
	return p, nil
}

// storeChanges are the mutations of plan p beyond the loaded cells: the
// deletes of the fp and band cells of replaced documents and the
// tombstones of fingerprints left without a document.
func storeChanges(bw *kvindex.BulkWriter, p *plan) []storage.Mutation {
	if p == nil {
		return nil
	}
	var muts []storage.Mutation
	for _, d := range p.DeleteFP {
		muts = append(muts, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableFP, Row: kvindex.FPRowKey(d.FP), Qualifier: []byte(d.ID)})
	}
	for _, b := range p.DeleteBand {
		muts = append(muts, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableBands, Row: kvindex.BandRowKey(b.Band, b.H), Qualifier: []byte(b.ID)})
	}
	for _, f := range p.Tombstone {
		muts = append(muts, bw.Tombstones(fingerprint.Fingerprint(f))...)
	}
	return muts
}

// Planner plans a load into an index that holds documents outside a
// load, as a load plans it (plan.go): what replacing stored documents,
// and records superseded within the load, change beyond the loaded cells
// (the old versions' fp and band cells deleted, tombstones of
// fingerprints left without a document) and what the counters get. For
// the Spark backfill, whose parts feed it.
//
// Feed every id's winning record (the last record of the id) with the
// records it supersedes, in id order (Winner), then every fp cell the
// load writes, in (fingerprint, id) order (FPCell); then Finish. Nothing
// is written before Plan.Apply.
type Planner struct{ pl *planner }

// NewPlanner plans a load into ix; freshDocs: the docs and fp tables held
// no row when the load began (nothing stored is read).
func NewPlanner(ix Index, freshDocs bool) *Planner {
	return &Planner{newPlanner(ix, freshDocs)}
}

// Winner takes id's winning record w and the records it supersedes.
func (p *Planner) Winner(ctx context.Context, id string, w kvindex.Document, dropped []kvindex.Document) error {
	return p.pl.winner(ctx, id, w, dropped)
}

// FPCell takes an fp cell the load writes: fingerprint fp, document id.
func (p *Planner) FPCell(ctx context.Context, fp uint64, id string) error {
	return p.pl.fpCell(ctx, fp, id)
}

// Finish reads the rest and returns the plan.
func (p *Planner) Finish(ctx context.Context) (*Plan, error) {
	pl, err := p.pl.finish(ctx)
	if err != nil {
		return nil, fmt.Errorf("bulkload: plan: %w", err)
	}
	return &Plan{p: pl}, nil
}

// Plan is a Planner's plan. It marshals to JSON and back, so that it can
// be kept until it is applied (a load keeps its plan in its checkpoint
// directory).
type Plan struct{ p *plan }

// MarshalJSON encodes the plan as a load's plan.json.
func (p *Plan) MarshalJSON() ([]byte, error) { return json.Marshal(p.p) }

// UnmarshalJSON decodes a plan MarshalJSON encoded.
func (p *Plan) UnmarshalJSON(b []byte) error {
	var pl plan
	if err := json.Unmarshal(b, &pl); err != nil {
		return err
	}
	if pl.Version != planVersion {
		return fmt.Errorf("bulkload: plan version %d, want %d", pl.Version, planVersion)
	}
	p.p = &pl
	return nil
}

// Counts are the counters' additions: documents and fingerprints new to
// the index (less those left without a document).
func (p *Plan) Counts() (docs, fps int64) { return p.p.NewDocs, p.p.FPDelta }

// Apply writes the plan's changes beyond the loaded cells into ix, after
// the loaded cells, as a load applies them.
func (p *Plan) Apply(ctx context.Context, ix Index) error {
	muts := storeChanges(ix.BulkWriter(), p.p)
	if len(muts) == 0 {
		return nil
	}
	if err := ix.BulkWriter().Apply(ctx, muts); err != nil {
		return errors.Join(errors.New("bulkload: replacing stored documents"), err)
	}
	return nil
}
