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

// phase1 reads the input from the checkpoint's position: each record's
// index entries and cells go to the spill buffers, which are written as
// sorted runs whenever they could overflow and once at the end. Nothing is
// written to the store.
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
	if err := l.spillLast(); err != nil {
		return err
	}
	l.cp.Phase1Done = true
	l.bufs, l.scratches, l.cells, l.cellScratches, l.spare = nil, nil, [numCellKinds]cellBuf{}, nil, nil
	// Collect the spill buffers now (most of the heap): left to the
	// pacer, they stay counted while the merge phase's garbage piles on
	// top (peak RSS at 10^7 under --memory 1GiB: 880 MB without this
	// collection).
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

// inputFile is one input file open for reading.
type inputFile struct {
	br *bufio.Reader
	// format is the file's: FormatDocs or FormatFingerprints.
	format string
	// display names the file in messages.
	display string
	// counted is the input bytes of the file read (compressed size),
	// written by the producer's reads.
	counted atomic.Int64
	close   func() error
}

// openFile opens an input file (name "-": Stdin) and tells its format:
// the configured one, or in auto mode by its name and first byte. The
// fingerprinter is made when the first document input is met.
func (l *loader) openFile(name string) (*inputFile, error) {
	in := &inputFile{display: name}
	if name == "-" {
		in.display = "stdin"
	}
	r, closeIn, err := openInput(name, l.cfg.Stdin, func(n int64) { in.counted.Add(n); l.pBytes.Add(n) })
	if err != nil {
		return nil, fmt.Errorf("bulkload: %w", err)
	}
	in.close = closeIn
	br, _ := r.(*bufio.Reader)
	if br == nil {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	in.br = br
	in.format = l.cfg.Format
	if in.format == FormatAuto {
		first, _ := br.Peek(1)
		var b byte
		if len(first) > 0 {
			b = first[0]
		}
		in.format = formatOf(name, b)
	}
	if in.format == FormatDocs && l.fpr == nil {
		if l.fpr, err = l.cfg.NewFingerprinter(); err != nil {
			closeIn()
			return nil, fmt.Errorf("bulkload: %w", err)
		}
	}
	return in, nil
}

// readFile reads file fi from the checkpoint's position. A producer
// goroutine reads and processes the next batch (parse and fingerprint on
// the workers) while this goroutine commits the previous one and spills:
// both cores stay busy. The producer is owned by readFile: it stops when
// readFile returns (done) and is joined before.
func (l *loader) readFile(ctx context.Context, fi int, name string, capN int) error {
	in, err := l.openFile(name)
	if err != nil {
		return err
	}
	defer in.close()
	skipTo := int64(0)
	if fi == l.cp.File {
		skipTo = l.cp.Line
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
	wg.Go(func() { l.produce(in.br, in.format, skipTo, &in.counted, free, ready, done) })
	for {
		var rb *readBatch
		select {
		case rb = <-ready:
		case <-ctx.Done():
			return ctx.Err()
		}
		if rb.err != nil {
			return fmt.Errorf("bulkload: reading %s: %w", in.display, rb.err)
		}
		if len(rb.items) > 0 {
			if err := l.commitRead(ctx, fi, rb, in.display, inBase, capN); err != nil {
				return err
			}
		}
		if rb.eof {
			l.cp.InputBytes = inBase + in.counted.Load()
			return nil
		}
		free <- rb
	}
}

// commitRead commits a processed batch of file fi, moves the checkpoint's
// position past it and spills when any buffer could overflow with the
// next batch.
func (l *loader) commitRead(ctx context.Context, fi int, rb *readBatch, display string, inBase int64, capN int) error {
	if err := l.commitBatch(ctx, rb.items, display); err != nil {
		return err
	}
	l.cp.File, l.cp.Line = fi, rb.line
	if l.cfg.afterBatch != nil {
		l.cfg.afterBatch()
	}
	if !l.nearlyFull(capN) {
		return nil
	}
	l.cp.InputBytes = inBase + rb.counted
	return l.spillAsync(capN)
}

// produce reads batches of lines from br (skipping the first skipTo),
// processes them and sends them on ready, taking empty batches from free,
// until the input ends, a read fails or done is closed. The processing
// of a batch overlaps the reading of the next (a goroutine of its own,
// which produce joins): read one after the other, the processing workers
// would wait for every batch's lines (~0.3 s of a 10^7 load's read phase).
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
		lineNo = l.fillBatch(rb, lr, lineNo, skipTo)
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

// fillBatch reads up to BatchDocs lines into rb, the end of the input
// (rb.eof) or a read error (rb.err) ending it early; lines up to skipTo
// (already committed before a resume) are skipped. lineNo counts the
// file's lines read before; fillBatch returns it counting rb's.
func (l *loader) fillBatch(rb *readBatch, lr *lineReader, lineNo, skipTo int64) int64 {
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
	return lineNo
}
