package bulkload

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// mayHoldText reports whether inputs read in format may hold text
// documents (stdin in auto mode is decided by its first byte, later).
func mayHoldText(format string, files []string) bool {
	switch format {
	case FormatDocs:
		return true
	case FormatFingerprints:
		return false
	}
	for _, f := range files {
		if f == "-" || formatOf(f, 0) == FormatDocs {
			return true
		}
	}
	return false
}

// phase1 reads the input from the checkpoint's position, writes fp and docs
// cells and spills index entries.
func (l *loader) phase1(ctx context.Context, files []string) (err error) {
	capN := l.bufferCap()
	b := l.newSpillBufs(capN)
	l.bufs, l.cells = b.bufs, b.cells
	l.pRecords.Store(l.cp.Records)
	l.pRejected.Store(l.cp.Rejected)
	l.pBytes.Store(l.cp.InputBytes)
	defer func() { err = errors.Join(err, l.waitSpillSaved(), l.waitSynced()) }()
	for fi := l.cp.File; fi < len(files); fi++ {
		if err := l.readFile(ctx, fi, files[fi], capN); err != nil {
			return err
		}
		l.cp.File, l.cp.Line = fi+1, 0
	}
	// The background spill first: it uses the sort scratches too. Then
	// every spill's sync and checkpoint: the next save is the last.
	if err := l.waitSpillSaved(); err != nil {
		return err
	}
	runs := l.cp.Runs
	if err := l.spill(); err != nil {
		return err
	}
	if l.cp.Runs > runs {
		if err := syncRuns(l.cfg.CheckpointDir, l.spillRunPaths(runs)); err != nil {
			return fmt.Errorf("bulkload: spill: %w", err)
		}
	}
	if err := l.waitSynced(); err != nil {
		return err
	}
	l.cp.Phase1Done = true
	l.bufs, l.scratches, l.cells, l.cellScratches, l.spare = nil, nil, [numCellKinds]cellBuf{}, nil, nil
	// Collect the spill buffers now (most of the heap): left to the
	// pacer, they stayed counted while the merge phase's garbage piled on
	// top, and peak RSS at 10^7 under --memory 1GiB was 880 MB.
	runtime.GC()
	return l.saveCheckpoint()
}

// readBatch is one batch of input lines, read and processed (parsed,
// fingerprinted, cells encoded) ahead of the Run goroutine's commit.
type readBatch struct {
	items   []item
	arena   []byte // the lines' text, which items[i].text points into
	line    int64  // lines of the file consumed through this batch
	counted int64  // input bytes of the file read so far (for the checkpoint)
	eof     bool
	err     error
}

// readFile reads file fi from the checkpoint's position. A producer
// goroutine reads and processes the next batch (parse and fingerprint on
// the workers) while this goroutine commits the previous one and spills:
// both cores stay busy. The producer is owned by readFile: it stops when
// readFile returns (done) and is joined before.
func (l *loader) readFile(ctx context.Context, fi int, name string, capN int) error {
	var counted atomic.Int64 // input bytes of this file read; written by the producer's reads
	r, closeIn, err := openInput(name, l.cfg.Stdin, func(n int64) { counted.Add(n); l.pBytes.Add(n) })
	if err != nil {
		return fmt.Errorf("bulkload: %w", err)
	}
	defer closeIn()
	br, _ := r.(*bufio.Reader)
	if br == nil {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	format := l.cfg.Format
	if format == FormatAuto {
		first, _ := br.Peek(1)
		var b byte
		if len(first) > 0 {
			b = first[0]
		}
		format = formatOf(name, b)
	}
	if format == FormatDocs && l.fpr == nil {
		if l.fpr, err = l.cfg.NewFingerprinter(); err != nil {
			return fmt.Errorf("bulkload: %w", err)
		}
	}
	skipTo := int64(0)
	if fi == l.cp.File {
		skipTo = l.cp.Line
	}
	display := name
	if name == "-" {
		display = "stdin"
	}
	inBase := l.cp.InputBytes
	// Three batches circulate: one being committed here, one being
	// processed (parsed, fingerprinted) and one being read by the
	// producer.
	free := make(chan *readBatch, 3)
	for range 3 {
		free <- &readBatch{items: make([]item, 0, l.cfg.BatchDocs)}
	}
	ready := make(chan *readBatch, 1)
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(done)
		wg.Wait()
	}()
	wg.Go(func() { l.produce(br, format, skipTo, &counted, free, ready, done) })
	for {
		var rb *readBatch
		select {
		case rb = <-ready:
		case <-ctx.Done():
			return ctx.Err()
		}
		if rb.err != nil {
			return fmt.Errorf("bulkload: reading %s: %w", display, rb.err)
		}
		if len(rb.items) > 0 {
			if err := l.commitBatch(ctx, rb.items, display); err != nil {
				return err
			}
			l.cp.File, l.cp.Line = fi, rb.line
			if l.cfg.afterBatch != nil {
				l.cfg.afterBatch()
			}
			// Spill when any buffer could overflow with the next batch.
			if l.nearlyFull(capN) {
				l.cp.InputBytes = inBase + rb.counted
				if err := l.spillAsync(capN); err != nil {
					return err
				}
			}
		}
		if rb.eof {
			l.cp.InputBytes = inBase + counted.Load()
			return nil
		}
		free <- rb
	}
}

// produce reads batches of lines from br (skipping the first skipTo),
// processes them and sends them on ready, taking empty batches from free,
// until the input ends, a read fails or done is closed. The processing
// of a batch overlaps the reading of the next (a goroutine of its own,
// which produce joins): read one after the other, the processing workers
// waited for every batch's lines (~0.3 s of a 10^7 load's read phase).
func (l *loader) produce(br *bufio.Reader, format string, skipTo int64, counted *atomic.Int64, free, ready chan *readBatch, done chan struct{}) {
	read := make(chan *readBatch) // unbuffered: at most one batch read ahead of the processing
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for rb := range read {
			if rb.err == nil && len(rb.items) > 0 {
				l.processBatch(rb.items, format)
			}
			select {
			case ready <- rb:
			case <-done:
				return
			}
		}
	})
	defer close(read)
	lr := &lineReader{br: br}
	lineNo := int64(0)
	for {
		var rb *readBatch
		select {
		case rb = <-free:
		case <-done:
			return
		}
		rb.items, rb.arena = rb.items[:0], rb.arena[:0]
		for len(rb.items) < l.cfg.BatchDocs {
			line, long, err := lr.next()
			if err == io.EOF {
				rb.eof = true
				break
			}
			if err != nil {
				rb.err = err
				break
			}
			lineNo++
			if lineNo <= skipTo {
				continue
			}
			// The text is copied into the batch's arena; items point into
			// it once the arena has stopped growing.
			off := len(rb.arena)
			rb.arena = append(rb.arena, line...)
			// The item's encode buffer is kept: the batch is reused.
			rb.items = rb.items[:len(rb.items)+1]
			it := &rb.items[len(rb.items)-1]
			*it = item{line: lineNo, long: long, textOff: off, textLen: len(line), vals: it.vals[:0]}
		}
		for i := range rb.items {
			it := &rb.items[i]
			it.text = rb.arena[it.textOff : it.textOff+it.textLen : it.textOff+it.textLen]
		}
		rb.line, rb.counted = lineNo, counted.Load()
		select {
		case read <- rb:
		case <-done:
			return
		}
		if rb.eof || rb.err != nil {
			return
		}
	}
}
