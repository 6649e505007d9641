package bulkload

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// Ids that repeat, within the load or against the index, follow one rule:
// the last record of an id wins, as a sequence of online inserts
// (InsertAlways) in input order would have it. A record superseded by a
// later one of the same id, and a stored document replaced by a loaded one,
// no longer carry their fingerprint: their fp cell goes (unless the winner
// has the same fingerprint), so do their band cells (those the winner does
// not have too, as an online replace removes them), a fingerprint left
// with no document is not
// indexed (when it came only from the load) or gets tombstones (when it was
// stored, as an online delete does), and the counters count documents and
// fingerprints once.
//
// The plan holds what the merge phase needs for that. It is computed
// before the merge phase writes anything (the reads see the index as it
// was before the load) and saved in the checkpoint directory, so a resumed
// merge phase uses the same plan. A load into an empty store whose ids are
// all distinct needs no plan.

// plan is plan.json, version 2 (1 had no band cells).
type plan struct {
	Version int `json:"version"`
	// NewDocs and FPDelta are the counter additions.
	NewDocs int64 `json:"new_docs"`
	FPDelta int64 `json:"fp_delta"`
	// Fingerprints is the number of distinct fingerprints the load's
	// winning records carry (for the summary).
	Fingerprints int64 `json:"fingerprints"`
	// SkipFP: fp cells of superseded records, not written.
	SkipFP []fpID `json:"skip_fp,omitempty"`
	// DeleteFP: stored fp cells of documents the load replaces with
	// another fingerprint.
	DeleteFP []fpID `json:"delete_fp,omitempty"`
	// SkipBand: band cells of superseded records that the id's winning
	// record does not have, not written.
	SkipBand []bandID `json:"skip_band,omitempty"`
	// DeleteBand: stored band cells of documents the load replaces that
	// the new version does not have.
	DeleteBand []bandID `json:"delete_band,omitempty"`
	// NoIndex: fingerprints no winning record carries; their index
	// entries from superseded records are dropped.
	NoIndex []uint64 `json:"no_index,omitempty"`
	// Tombstone: stored fingerprints no document carries after the load.
	Tombstone []uint64 `json:"tombstone,omitempty"`
}

type fpID struct {
	FP uint64 `json:"fp"`
	ID string `json:"id"`
}

// bandID is one band cell: the document id in band Band's row of hash H.
type bandID struct {
	Band int    `json:"band"`
	H    uint64 `json:"h"`
	ID   string `json:"id"`
}

// goneBands appends the band cells of old (id's version being replaced)
// that next (the new version; its Bands nil for none) does not put again:
// what an online replace deletes (kvindex's bandDeletes), the text-key
// cells scoped to old's source (source: the index's SourceOf) among them.
func goneBands(dst []bandID, id string, old, next kvindex.Document, source func(map[string]string) string) []bandID {
	for i, h := range old.Bands {
		switch {
		case i < fingerprint.NumBands && len(next.Bands) >= fingerprint.NumBands && next.Bands[i] == h:
			continue // the same LSH band
		case i >= fingerprint.NumBands && slices.Contains(next.Bands.TextKeys(), h):
			continue // the same text key, wherever it stands among next's
		}
		dst = append(dst, bandID{fingerprint.BandOf(i), h, id})
	}
	if src := source(old.Attrs); src != "" {
		same := source(next.Attrs) == src
		for _, h := range old.Bands.TextKeys() {
			if same && slices.Contains(next.Bands.TextKeys(), h) {
				continue
			}
			dst = append(dst, bandID{kvindex.SourceKeyBand, kvindex.SourceTextKey(src, h), id})
		}
	}
	return dst
}

const planVersion = 2

func (l *loader) planPath() string { return filepath.Join(l.cfg.CheckpointDir, "plan.json") }

// ensurePlan computes and saves the plan, or reads the saved one. It
// returns nil when none is needed.
func (l *loader) ensurePlan(ctx context.Context) (*plan, error) {
	if l.cp.PlanDone {
		if !l.cp.HasPlan {
			return nil, nil
		}
		b, err := os.ReadFile(l.planPath())
		if err != nil {
			return nil, fmt.Errorf("bulkload: plan: %w", err)
		}
		var p plan
		if err := json.Unmarshal(b, &p); err != nil || p.Version != planVersion {
			return nil, fmt.Errorf("bulkload: plan %s unreadable (%v): remove the checkpoint directory to start over", l.planPath(), err)
		}
		return &p, nil
	}
	p, err := l.makePlan(ctx)
	if err != nil {
		return nil, err
	}
	if p != nil {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		tmp := l.planPath() + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return nil, fmt.Errorf("bulkload: plan: %w", err)
		}
		if err := os.Rename(tmp, l.planPath()); err != nil {
			return nil, fmt.Errorf("bulkload: plan: %w", err)
		}
	}
	l.cp.PlanDone, l.cp.HasPlan = true, p != nil
	if err := l.saveCheckpoint(); err != nil {
		return nil, fmt.Errorf("bulkload: checkpoint: %w", err)
	}
	return p, nil
}

// getBatch is the number of rows read per Get while planning.
const getBatch = 1024

func (l *loader) makePlan(ctx context.Context) (*plan, error) {
	ids, err := l.idCount(ctx)
	if err != nil {
		return nil, err
	}
	idDups := ids.repeats
	if l.cp.FreshDocs && idDups == 0 {
		return nil, nil
	}
	pl := newPlanner(l.ix, l.cp.FreshDocs)

	// Pass 1: the docs cells. The merger yields each id's last record and
	// reports the earlier ones.
	m, err := newCellMerger(l.runPaths(cellKinds[cellDoc]))
	if err != nil {
		return nil, fmt.Errorf("bulkload: %w", err)
	}
	defer m.close()
	var dropped []kvindex.Document
	var decodeErr error
	m.onDropped = func(row, qual, val []byte) {
		d, err := l.ix.DecodeDocument(storage.Row{Key: row, Cells: []storage.Cell{{Qualifier: qual, Value: val}}})
		if err != nil {
			decodeErr = err
			return
		}
		dropped = append(dropped, d)
	}
	for {
		dropped = dropped[:0]
		row, qual, val, _, ok, err := m.next()
		if err == nil {
			err = decodeErr
		}
		if err != nil {
			return nil, fmt.Errorf("bulkload: plan: %w", err)
		}
		if !ok {
			break
		}
		w, err := l.ix.DecodeDocument(storage.Row{Key: row, Cells: []storage.Cell{{Qualifier: qual, Value: val}}})
		if err != nil {
			return nil, fmt.Errorf("bulkload: plan: %w", err)
		}
		if err := pl.winner(ctx, string(row), w, dropped); err != nil {
			return nil, err
		}
	}
	if err := pl.endWinners(ctx); err != nil {
		return nil, err
	}

	// Pass 2: the fp cells, without the superseded ones: count the
	// winners of candidate fingerprints and the fingerprints new to the
	// index.
	fm, err := newCellMerger(l.runPaths(cellKinds[cellFP]))
	if err != nil {
		return nil, fmt.Errorf("bulkload: %w", err)
	}
	defer fm.close()
	for {
		row, qual, _, _, ok, err := fm.next()
		if err != nil {
			return nil, fmt.Errorf("bulkload: plan: %w", err)
		}
		if !ok {
			break
		}
		if len(row) != 8 {
			return nil, fmt.Errorf("bulkload: plan: fp cell row of %d bytes", len(row))
		}
		if err := pl.fpCell(ctx, binary.BigEndian.Uint64(row), string(qual)); err != nil {
			return nil, err
		}
	}
	// Then the candidates: fingerprints that lost a carrier.
	return pl.finish(ctx)
}

// skipSet is the plan's SkipFP as a set.
func (p *plan) skipSet() map[fpID]bool {
	if p == nil || len(p.SkipFP) == 0 {
		return nil
	}
	s := make(map[fpID]bool, len(p.SkipFP))
	for _, k := range p.SkipFP {
		s[k] = true
	}
	return s
}

// skipBandSet is the plan's SkipBand as a set.
func (p *plan) skipBandSet() map[bandID]bool {
	if p == nil || len(p.SkipBand) == 0 {
		return nil
	}
	s := make(map[bandID]bool, len(p.SkipBand))
	for _, k := range p.SkipBand {
		s[k] = true
	}
	return s
}

// noIndexSet is the plan's NoIndex as a set.
func (p *plan) noIndexSet() map[uint64]bool {
	if p == nil || len(p.NoIndex) == 0 {
		return nil
	}
	s := make(map[uint64]bool, len(p.NoIndex))
	for _, f := range p.NoIndex {
		s[f] = true
	}
	return s
}

// applyStoreChanges deletes the fp cells and band cells of replaced
// documents and writes the tombstones of fingerprints left without a
// document.
func (l *loader) applyStoreChanges(ctx context.Context, p *plan) error {
	muts := storeChanges(l.bw, p)
	if len(muts) == 0 {
		return nil
	}
	if err := l.apply(ctx, muts); err != nil {
		return errors.Join(errors.New("bulkload: replacing stored documents"), err)
	}
	return nil
}
