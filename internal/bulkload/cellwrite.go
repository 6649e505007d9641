package bulkload

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// stageDir holds the sorted string tables staged for the store's ingest.
func (l *loader) stageDir() string { return filepath.Join(l.cfg.CheckpointDir, "sst") }

// cellWriter returns the writer of sorted cells of one table (kind names
// its staging directory): HFiles that HBase bulk-loads (hbaseimport.go),
// the store's own (sstables ingested at commit) or batches of puts.
func (l *loader) cellWriter(ctx context.Context, t storage.Table, kind string) (storage.CellWriter, error) {
	if w, ok, err := l.hfileCellWriter(ctx, t, kind); ok {
		return w, err
	}
	if ci, ok := l.ix.Store().(cellIngester); ok {
		w, err := ci.NewCellWriter(t, filepath.Join(l.stageDir(), kind))
		if err != nil {
			return nil, fmt.Errorf("bulkload: %w", err)
		}
		return w, nil
	}
	return l.newPutWriter(ctx, t), nil
}

// commit commits w, after the test hook.
func (l *loader) commit(ctx context.Context, w storage.CellWriter, kind string) error {
	if l.cfg.beforeCommit != nil {
		l.cfg.beforeCommit(kind)
	}
	if done := l.idsCounted; done != nil {
		// A speculative merge phase: commit only if no id repeats.
		select {
		case <-done:
		case <-ctx.Done():
			return errors.Join(ctx.Err(), w.Abort())
		}
		ids, err := l.idCount(ctx)
		if err == nil && ids.repeats > 0 {
			err = errRepeatedIDs
		}
		if err != nil {
			return errors.Join(err, w.Abort())
		}
	}
	if err := w.Commit(ctx); err != nil {
		return fmt.Errorf("bulkload: writing %s: %w", kind, err)
	}
	return nil
}

// writeCells merges the cell runs of kind i (cellFP, cellBand, cellDoc)
// and writes each distinct cell once, the last input's value. fp and band
// cells of superseded records (the plan's) are left out. It returns the
// bytes written.
func (l *loader) writeCells(ctx context.Context, i int, p *plan) (int64, error) {
	var skipFP map[fpID]bool
	var skipBand map[bandID]bool
	switch i {
	case cellFP:
		skipFP = p.skipSet()
	case cellBand:
		skipBand = p.skipBandSet()
	}
	m, err := newCellMerger(l.runPaths(cellKinds[i]))
	if err != nil {
		return 0, fmt.Errorf("bulkload: %w", err)
	}
	defer m.close()
	w, err := l.cellWriter(ctx, cellTables[i], cellKinds[i])
	if err != nil {
		return 0, err
	}
	bw := bandWriter{w: w, buckets: l.ix.Buckets(), skip: skipBand}
	bw.tw, bw.timed = w.(storage.TimedCellPutter)
	var written int64
	// Without fps runs the distinct fingerprints are the fp table's
	// distinct rows (a row is a fingerprint; with a plan, whose count is
	// used instead, superseded records' cells are skipped here).
	countFPs := i == cellFP && !l.cp.FPRuns
	var fps int64
	var lastFP []byte
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, errors.Join(err, w.Abort())
			}
		}
		row, qual, val, _, ok, err := m.next()
		if err != nil {
			return 0, errors.Join(fmt.Errorf("bulkload: %w", err), w.Abort())
		}
		if !ok {
			break
		}
		switch {
		case skipFP != nil && skipFP[fpID{binary.BigEndian.Uint64(row), string(qual)}]:
			continue // the fp cell of a superseded record
		case i == cellBand:
			b, err := bw.put(row, qual, val)
			if err != nil {
				return 0, errors.Join(err, w.Abort())
			}
			written += b
			continue
		}
		if err := w.Put(row, qual, val); err != nil {
			return 0, errors.Join(err, w.Abort())
		}
		written += int64(len(row) + len(qual) + len(val))
		if countFPs && (fps == 0 || !bytes.Equal(row, lastFP)) {
			fps++
			lastFP = append(lastFP[:0], row...)
		}
	}
	if countFPs {
		l.fpCount = runCount{n: fps}
	}
	return written, l.commit(ctx, w, cellKinds[i])
}

// bandWriter writes band cells from their run: a run value is the
// document's time bucket, which becomes the cell's timestamp when the
// writer stamps cells (timed: HBase's writers), as an insert writes it, so
// a family TTL expires them with the document's index cells; the stored
// value is empty. The band cells of superseded records (skip) are left
// out.
type bandWriter struct {
	w       storage.CellWriter
	tw      storage.TimedCellPutter
	timed   bool
	buckets storage.Buckets
	skip    map[bandID]bool
}

// put writes one band cell and returns the bytes written (0 for a skipped
// one).
func (bw *bandWriter) put(row, qual, val []byte) (int64, error) {
	band, h, err := kvindex.ParseBandRowKey(row)
	if err != nil || len(val) != 4 {
		return 0, fmt.Errorf("bulkload: band cell run: row %x, value of %d bytes: %v", row, len(val), err)
	}
	if bw.skip != nil && bw.skip[bandID{band, h, string(qual)}] {
		return 0, nil // the band cell of a superseded record
	}
	if bw.timed {
		err = bw.tw.PutAt(row, qual, []byte{}, bw.buckets.Start(binary.BigEndian.Uint32(val)))
	} else {
		err = bw.w.Put(row, qual, []byte{})
	}
	if err != nil {
		return 0, err
	}
	return int64(len(row) + len(qual)), nil
}
