package bulkload

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

// Index is what the loader needs of a *kvindex.Index.
type Index interface {
	Layout() fingerprint.Layout
	Buckets() kvindex.Buckets
	DocMutations(d kvindex.Document) ([]kvindex.Mutation, error)
	CounterMutations(docs, fps int64) []kvindex.Mutation
	Apply(ctx context.Context, muts []kvindex.Mutation) error
	UpdateRow(ctx context.Context, row []byte, fn func(kvindex.Row) ([]kvindex.Mutation, error)) error
	BaseSetMutations(row []byte, bucket uint32, residuals []uint64, oldChunks int) ([]kvindex.Mutation, error)
	Store() kvindex.Store
}

var _ Index = (*kvindex.Index)(nil)

// flusher is implemented by stores that buffer writes (the embedded store
// opened with NoSync): checkpoints flush them so that what a checkpoint
// covers survives a machine crash too.
type flusher interface{ Flush() error }

// Summary is what a load did.
type Summary struct {
	// Records are the good input lines; Rejected the bad ones.
	Records  int64
	Rejected int64
	// Documents: distinct ids this shard wrote; DuplicateIDs: input records
	// whose id repeated an earlier one (the last one's docs cell wins).
	Documents    int64
	DuplicateIDs int64
	// Fingerprints: distinct fingerprints this shard wrote.
	Fingerprints int64
	// IndexRows written and IndexEntries (residuals) placed in them.
	IndexRows    int64
	IndexEntries int64
	// DuplicatePairs and DuplicateDocuments (documents in a near-duplicate
	// cluster other than its earliest) of the self-dedup report, when asked.
	DuplicatePairs     int64
	DuplicateDocuments int64
	// BytesWritten is the size of the cells written (keys, qualifiers,
	// values).
	BytesWritten int64
	// InputBytes read (compressed size).
	InputBytes int64
	Runs       int
	Resumed    bool
	Duration   time.Duration
}

// checkpoint is checkpoint.json. Version 1.
type checkpoint struct {
	Version      int         `json:"version"`
	LoadID       string      `json:"load_id"`
	Inputs       []inputInfo `json:"inputs"`
	Shard        int         `json:"shard"`
	Shards       int         `json:"shards"`
	File         int         `json:"file"` // next input to read
	Line         int64       `json:"line"` // lines of it already consumed
	Records      int64       `json:"records"`
	Rejected     int64       `json:"rejected"`
	RejectsBytes int64       `json:"rejects_bytes"`
	InputBytes   int64       `json:"input_bytes"`
	BytesWritten int64       `json:"bytes_written"`
	Runs         int         `json:"runs"` // spills 0..Runs-1 exist
	Phase1Done   bool        `json:"phase1_done"`
	// FreshIndex: when the load started, the index had no row in this
	// shard's range, so rows are written without reading them first.
	FreshIndex bool `json:"fresh_index"`
	// IndexFirst: the fp and docs cells are in document runs (written
	// after the index rows), not in the store. A checkpoint of one mode
	// cannot be resumed in the other.
	IndexFirst bool `json:"index_first,omitempty"`
}

type inputInfo struct {
	Name string `json:"name"`
	Size int64  `json:"size"` // -1 for stdin
}

const checkpointVersion = 1

// loader is one Run's state. Its fields are used by the Run goroutine only,
// except the atomics read by the progress reporter.
type loader struct {
	ix    Index
	cfg   Config
	perms []fingerprint.Permuter
	T     int
	cp    checkpoint
	// buffers: one per table, then ids, then fps (fixed capacity).
	bufs    [][]entry
	scratch []entry
	fpr     *fingerprint.Fingerprinter
	rejects *os.File
	rejW    *bufio.Writer
	sum     Summary
	// docw receives the current run's fp and docs cells (IndexFirst).
	docw *docRunWriter
	// rowW applies index row batches (InFlight at a time).
	rowW *applier

	// Progress counters (atomic: read by the progress goroutine).
	pRecords, pRejected, pBytes, pRows atomic.Int64
	phase                              atomic.Value // string
	totalBytes                         int64
	totalRows                          int64
}

// Run loads cfg.Inputs into ix. It returns what it did; on error, rerunning
// with the same configuration resumes.
func Run(ctx context.Context, ix Index, cfg Config) (Summary, error) {
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	cfg = cfg.withDefaults()
	start := time.Now()
	l := &loader{ix: ix, cfg: cfg, perms: ix.Layout().Permuters()}
	l.T = len(l.perms)
	if l.cfg.DedupK == -1 {
		l.cfg.DedupK = ix.Layout().K
	}
	if l.cfg.DedupK > ix.Layout().K {
		return Summary{}, fmt.Errorf("%w: dedup k %d above the layout's K %d", ErrConfig, l.cfg.DedupK, ix.Layout().K)
	}
	l.phase.Store("read")
	if err := os.MkdirAll(cfg.CheckpointDir, 0o755); err != nil {
		return Summary{}, fmt.Errorf("bulkload: %w", err)
	}
	files, err := expandInputs(cfg.Inputs)
	if err != nil {
		return Summary{}, err
	}
	if err := l.loadCheckpoint(ctx, files); err != nil {
		return Summary{}, err
	}
	for _, in := range l.cp.Inputs {
		l.totalBytes += max(in.Size, 0)
	}
	l.sum.Resumed = l.cp.Records > 0 || l.cp.Runs > 0 || l.cp.Rejected > 0
	stopProgress := l.startProgress()
	err = l.run(ctx, files)
	stopProgress()
	l.sum.Duration = time.Since(start)
	if err != nil {
		return l.sum, err
	}
	s := l.sum
	cfg.Logger.Info("bulk load done", "records", s.Records, "rejected", s.Rejected, "documents", s.Documents,
		"fingerprints", s.Fingerprints, "duplicate_ids", s.DuplicateIDs, "index_rows", s.IndexRows,
		"duplicate_pairs", s.DuplicatePairs, "duplicate_documents", s.DuplicateDocuments,
		"bytes_written", s.BytesWritten, "seconds", s.Duration.Seconds(), "resumed", s.Resumed)
	return s, nil
}

func (l *loader) run(ctx context.Context, files []string) error {
	t0 := time.Now()
	if !l.cp.Phase1Done {
		if err := l.openRejects(); err != nil {
			return err
		}
		err := l.phase1(ctx, files)
		err = errors.Join(err, l.closeRejects())
		if err != nil {
			return err
		}
		l.cfg.Logger.Info("input read", "records", l.cp.Records, "runs", l.cp.Runs, "seconds", time.Since(t0).Seconds())
	}
	t0 = time.Now()
	l.sum.Records, l.sum.Rejected = l.cp.Records, l.cp.Rejected
	l.sum.InputBytes, l.sum.Runs = l.cp.InputBytes, l.cp.Runs
	l.sum.BytesWritten = l.cp.BytesWritten
	l.phase.Store("merge")
	if l.cfg.onPhase != nil {
		l.cfg.onPhase("merge")
	}
	for _, p := range l.perms {
		l.totalRows += min(int64(1)<<min(p.PrefixBits, 62), l.cp.Records) / int64(l.cfg.Shards)
	}
	pairs, err := l.phase2(ctx)
	if err != nil {
		return err
	}
	l.cfg.Logger.Info("index rows written", "rows", l.sum.IndexRows, "seconds", time.Since(t0).Seconds())
	if l.cfg.IndexFirst {
		t0 = time.Now()
		l.phase.Store("docs")
		if l.cfg.onPhase != nil {
			l.cfg.onPhase("docs")
		}
		l.pRows.Store(0)
		if err := l.writeDocRuns(ctx); err != nil {
			return err
		}
		l.cfg.Logger.Info("documents written", "documents", l.pRows.Load(), "seconds", time.Since(t0).Seconds())
	}
	l.phase.Store("count")
	groups, err := l.phase3(ctx)
	if err != nil {
		return err
	}
	if l.cfg.DedupPath != "" {
		if err := l.writeDedup(ctx, pairs, groups); err != nil {
			return err
		}
	}
	return nil
}

// loadID names this load (inputs and shard), for the counters marker.
func loadID(inputs []inputInfo, shard, shards int) string {
	h := xxhash.New()
	for _, in := range inputs {
		fmt.Fprintf(h, "%s\x00%d\x00", in.Name, in.Size)
	}
	fmt.Fprintf(h, "%d/%d", shard, shards)
	return fmt.Sprintf("%016x", h.Sum64())
}

func (l *loader) cpPath() string { return filepath.Join(l.cfg.CheckpointDir, "checkpoint.json") }

func (l *loader) loadCheckpoint(ctx context.Context, files []string) error {
	var infos []inputInfo
	for _, f := range files {
		if f == "-" {
			infos = append(infos, inputInfo{Name: "-", Size: -1})
			continue
		}
		st, err := os.Stat(f)
		if err != nil {
			return fmt.Errorf("bulkload: input: %w", err)
		}
		abs, _ := filepath.Abs(f)
		infos = append(infos, inputInfo{Name: abs, Size: st.Size()})
	}
	fresh := checkpoint{Version: checkpointVersion, Inputs: infos, Shard: l.cfg.Shard, Shards: l.cfg.Shards,
		LoadID: loadID(infos, l.cfg.Shard, l.cfg.Shards), IndexFirst: l.cfg.IndexFirst}
	b, err := os.ReadFile(l.cpPath())
	if errors.Is(err, os.ErrNotExist) {
		l.cp = fresh
		l.cp.FreshIndex, err = l.noRowsInRange(ctx)
		return err
	}
	if err != nil {
		return fmt.Errorf("bulkload: checkpoint: %w", err)
	}
	var cp checkpoint
	if err := json.Unmarshal(b, &cp); err != nil || cp.Version != checkpointVersion {
		return fmt.Errorf("bulkload: checkpoint %s unreadable (version %d, %v): remove the directory to start over", l.cpPath(), cp.Version, err)
	}
	if cp.LoadID != fresh.LoadID || !slices.Equal(cp.Inputs, fresh.Inputs) {
		return fmt.Errorf("%w: %s was written for other inputs or another shard; use a new checkpoint directory", ErrInputChanged, l.cpPath())
	}
	if cp.IndexFirst != l.cfg.IndexFirst {
		return fmt.Errorf("%w: %s was written by a load into another kind of store (index first: %v); use a new checkpoint directory", ErrInputChanged, l.cpPath(), cp.IndexFirst)
	}
	l.cp = cp
	l.cfg.Logger.Info("resuming bulk load", "file", cp.File, "line", cp.Line, "records", cp.Records, "runs", cp.Runs, "phase1_done", cp.Phase1Done)
	return nil
}

var (
	errFound = errors.New("found")
	errPast  = errors.New("past")
)

// noRowsInRange reports whether the index table has no row in this shard's
// range (rows of the shards before it are skipped over). The scan starts at
// the first table that holds rows of this shard, shard*T/n (rowShard of any
// row of an earlier table is below shard), so a later shard of a large
// index does not read the earlier shards' rows.
func (l *loader) noRowsInRange(ctx context.Context) (bool, error) {
	first := []byte{byte(l.cfg.Shard * l.T / l.cfg.Shards)}
	err := l.ix.Store().Scan(ctx, kvindex.TableIndex, first, nil, func(r kvindex.Row) error {
		t := int(r.Key[0])
		if t >= l.T || len(r.Key) < 2 {
			return errFound // not ours to judge: take the careful path
		}
		var prefix uint64
		for _, b := range r.Key[1:] {
			prefix = prefix<<8 | uint64(b)
		}
		p := l.perms[t]
		switch s := l.rowShard(t, p.Join(prefix, 0)); {
		case s == l.cfg.Shard:
			return errFound
		case s > l.cfg.Shard:
			return errPast
		}
		return nil
	})
	switch {
	case errors.Is(err, errFound):
		return false, nil
	case err == nil || errors.Is(err, errPast):
		return true, nil
	}
	return false, err
}

func (l *loader) saveCheckpoint() error {
	if f, ok := l.ix.Store().(flusher); ok {
		if err := f.Flush(); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(l.cp, "", "  ")
	if err != nil {
		return err
	}
	tmp := l.cpPath() + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return err
	}
	if err := os.Rename(tmp, l.cpPath()); err != nil {
		return err
	}
	return syncDir(l.cfg.CheckpointDir)
}

func (l *loader) openRejects() error {
	f, err := os.OpenFile(l.cfg.RejectsPath, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("bulkload: rejects file: %w", err)
	}
	// Drop rejects written after the checkpoint: the lines are re-read.
	if err := f.Truncate(l.cp.RejectsBytes); err != nil {
		return errors.Join(err, f.Close())
	}
	if _, err := f.Seek(l.cp.RejectsBytes, io.SeekStart); err != nil {
		return errors.Join(err, f.Close())
	}
	l.rejects, l.rejW = f, bufio.NewWriter(f)
	return nil
}

func (l *loader) closeRejects() error {
	if l.rejects == nil {
		return nil
	}
	err := errors.Join(l.rejW.Flush(), l.rejects.Close())
	l.rejects = nil
	return err
}

// reject is one line of the rejects file.
type reject struct {
	File   string `json:"file"`
	Line   int64  `json:"line"`
	Reason string `json:"reason"`
}

// bufferCap is the capacity of each spill buffer: half the memory bound
// over T+2 buffers plus the radix sort's scratch.
func (l *loader) bufferCap() int {
	if l.cfg.spillEvery > 0 {
		return l.cfg.spillEvery + l.cfg.BatchDocs
	}
	return int((l.cfg.Memory - l.cfg.StoreMemory) / 2 / int64(l.T+3) / 16)
}

// docShard is the shard that writes fp's fp and docs cells.
func (l *loader) docShard(fp uint64) int {
	hi, _ := bits.Mul64(fp, uint64(l.cfg.Shards))
	return int(hi)
}

// rowShard is the shard that writes index row (t, prefix): the row's
// position (t + prefix/2^P)/T in the row-key space, times n.
func (l *loader) rowShard(t int, v uint64) int {
	p := l.perms[t]
	a := v >> (64 - p.PrefixBits) << (64 - p.PrefixBits) // prefix, top-aligned
	hi, _ := bits.Mul64(a, uint64(l.cfg.Shards))
	return int((uint64(t)*uint64(l.cfg.Shards) + hi) / uint64(l.T))
}

// phase1 reads the input from the checkpoint's position, writes fp and docs
// cells and spills index entries.
func (l *loader) phase1(ctx context.Context, files []string) error {
	capN := l.bufferCap()
	l.bufs = make([][]entry, l.T+2)
	for i := range l.bufs {
		l.bufs[i] = make([]entry, 0, capN)
	}
	l.pRecords.Store(l.cp.Records)
	l.pRejected.Store(l.cp.Rejected)
	l.pBytes.Store(l.cp.InputBytes)
	if err := l.openDocRun(); err != nil {
		return err
	}
	defer func() {
		if l.docw != nil {
			l.docw.abort() // an unfinished run: its lines are read again on resume
			l.docw = nil
		}
	}()
	for fi := l.cp.File; fi < len(files); fi++ {
		if err := l.readFile(ctx, fi, files[fi], capN); err != nil {
			return err
		}
		l.cp.File, l.cp.Line = fi+1, 0
	}
	if err := l.spill(); err != nil {
		return err
	}
	l.cp.Phase1Done = true
	l.bufs, l.scratch = nil, nil
	return l.saveCheckpoint()
}

// item is one line of a batch.
type item struct {
	line  int64
	text  []byte
	long  bool
	rec   record
	err   error
	muts  []kvindex.Mutation
	owned bool
}

func (l *loader) readFile(ctx context.Context, fi int, name string, capN int) error {
	var counted int64
	r, closeIn, err := openInput(name, l.cfg.Stdin, func(n int64) { counted += n; l.pBytes.Add(n) })
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
	lr := &lineReader{br: br}
	lineNo := int64(0)
	skipTo := int64(0)
	if fi == l.cp.File {
		skipTo = l.cp.Line
	}
	display := name
	if name == "-" {
		display = "stdin"
	}
	batch := make([]item, 0, l.cfg.BatchDocs)
	eof := false
	for !eof {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch = batch[:0]
		for len(batch) < l.cfg.BatchDocs {
			line, long, err := lr.next()
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				return fmt.Errorf("bulkload: reading %s: %w", display, err)
			}
			lineNo++
			if lineNo <= skipTo {
				continue
			}
			batch = append(batch, item{line: lineNo, text: slices.Clone(line), long: long})
		}
		if len(batch) == 0 {
			continue
		}
		l.processBatch(batch, format)
		if err := l.commitBatch(ctx, batch, display); err != nil {
			return err
		}
		l.cp.File, l.cp.Line = fi, lineNo
		if l.cfg.afterBatch != nil {
			l.cfg.afterBatch()
		}
		// Spill when any buffer could overflow with the next batch.
		if l.nearlyFull(capN) {
			l.cp.InputBytes += counted
			counted = 0
			if err := l.spill(); err != nil {
				return err
			}
			if err := l.saveCheckpoint(); err != nil {
				return err
			}
		}
	}
	l.cp.InputBytes += counted
	return nil
}

func (l *loader) nearlyFull(capN int) bool {
	for _, b := range l.bufs {
		if len(b)+l.cfg.BatchDocs > capN {
			return true
		}
	}
	return false
}

// processBatch parses and fingerprints the batch's lines in parallel.
func (l *loader) processBatch(batch []item, format string) {
	w := min(l.cfg.Workers, len(batch))
	var wg sync.WaitGroup
	for k := range w {
		wg.Go(func() {
			for i := k; i < len(batch); i += w {
				l.processItem(&batch[i], format)
			}
		})
	}
	wg.Wait()
}

func (l *loader) processItem(it *item, format string) {
	if it.long {
		it.err = fmt.Errorf("line longer than %d bytes", MaxLineBytes)
		return
	}
	var rec record
	var err error
	if format == FormatDocs {
		rec, err = parseDocLine(it.text)
		if err == nil {
			var res fingerprint.Result
			res, err = l.fpr.Fingerprint(fingerprint.Document{Title: rec.title, Body: rec.text})
			rec.fp, rec.titleFP, rec.exact = res.Simhash, res.TitleSimhash, res.ExactHash
			rec.title, rec.text = "", ""
		}
	} else {
		rec, err = parseFPLine(it.text)
	}
	it.text = nil
	if err != nil {
		it.err = err
		return
	}
	it.rec = rec
	if err := kvindex.ValidateID(rec.id); err != nil {
		it.err = err
		return
	}
	it.owned = l.docShard(uint64(rec.fp)) == l.cfg.Shard
	d := kvindex.Document{ID: rec.id, Fingerprint: rec.fp, TitleFingerprint: rec.titleFP, ExactHash: rec.exact, Time: rec.at, Attrs: rec.attrs}
	muts, err := l.ix.DocMutations(d) // validates time and attributes
	if err != nil {
		it.err = err
		return
	}
	if it.owned {
		it.muts = muts
	}
}

// commitBatch writes rejects and cells of a processed batch and buffers its
// index entries.
func (l *loader) commitBatch(ctx context.Context, batch []item, file string) error {
	var muts []kvindex.Mutation
	buckets := l.ix.Buckets()
	for i := range batch {
		it := &batch[i]
		if it.err != nil {
			if errors.Is(it.err, errSkip) {
				continue
			}
			if l.cfg.Strict {
				return fmt.Errorf("%w: %s line %d: %v", ErrStrict, file, it.line, it.err)
			}
			b, _ := json.Marshal(reject{File: file, Line: it.line, Reason: it.err.Error()})
			b = append(b, '\n')
			if _, err := l.rejW.Write(b); err != nil {
				return fmt.Errorf("bulkload: rejects file: %w", err)
			}
			l.cp.RejectsBytes += int64(len(b))
			l.cp.Rejected++
			l.pRejected.Add(1)
			continue
		}
		l.cp.Records++
		l.pRecords.Add(1)
		fp := it.rec.fp
		bucket := buckets.Of(it.rec.at)
		for t, p := range l.perms {
			v := p.Permute(fp)
			if l.rowShard(t, v) == l.cfg.Shard {
				l.bufs[t] = append(l.bufs[t], entry{key: v, aux: bucket})
			}
		}
		if it.owned {
			l.bufs[l.T] = append(l.bufs[l.T], entry{key: xxhash.Sum64String(it.rec.id)})
			l.bufs[l.T+1] = append(l.bufs[l.T+1], entry{key: uint64(fp)})
			for _, m := range it.muts {
				l.cp.BytesWritten += int64(len(m.Row) + len(m.Qualifier) + len(m.Value))
			}
			if l.docw != nil {
				if err := l.docw.add(it.muts); err != nil {
					return fmt.Errorf("bulkload: document run: %w", err)
				}
				continue
			}
			muts = append(muts, it.muts...)
		}
	}
	if err := l.rejW.Flush(); err != nil {
		return fmt.Errorf("bulkload: rejects file: %w", err)
	}
	if len(muts) == 0 {
		return nil
	}
	return l.ix.Apply(ctx, muts)
}

func runName(n int, kind string) string { return fmt.Sprintf("run-%06d-%s.sdx", n, kind) }

func (l *loader) kindName(b int) string {
	switch b {
	case l.T:
		return "ids"
	case l.T + 1:
		return "fps"
	}
	return fmt.Sprintf("t%02d", b)
}

// spill sorts and writes every buffer as run number cp.Runs.
func (l *loader) spill() error {
	empty := true
	for _, b := range l.bufs {
		empty = empty && len(b) == 0
	}
	if empty {
		return nil
	}
	for i, b := range l.bufs {
		l.scratch = sortEntries(b, l.scratch)
		if _, err := writeRun(filepath.Join(l.cfg.CheckpointDir, runName(l.cp.Runs, l.kindName(i))), b); err != nil {
			return fmt.Errorf("bulkload: spill: %w", err)
		}
		l.bufs[i] = b[:0]
	}
	if l.docw != nil {
		err := l.docw.finish()
		l.docw = nil
		if err != nil {
			return fmt.Errorf("bulkload: spill: %w", err)
		}
	}
	l.cp.Runs++
	if err := l.openDocRun(); err != nil {
		return err
	}
	l.cfg.Logger.Debug("spilled run", "run", l.cp.Runs-1)
	return nil
}

// openDocRun starts the document run of run number cp.Runs (IndexFirst).
func (l *loader) openDocRun() error {
	if !l.cfg.IndexFirst {
		return nil
	}
	w, err := createDocRun(filepath.Join(l.cfg.CheckpointDir, runName(l.cp.Runs, "docs")))
	if err != nil {
		return fmt.Errorf("bulkload: document run: %w", err)
	}
	l.docw = w
	return nil
}

func (l *loader) runPaths(kind string) []string {
	var out []string
	for n := range l.cp.Runs {
		out = append(out, filepath.Join(l.cfg.CheckpointDir, runName(n, kind)))
	}
	return out
}

// phase2 merges each table's runs and writes its rows, tables in parallel.
// It returns the near-duplicate pairs when a dedup report is asked for.
func (l *loader) phase2(ctx context.Context) ([][2]uint64, error) {
	var mu sync.Mutex // protects pairs, errs and the summary counts below
	var pairs [][2]uint64
	var errs []error
	var rows, entries, written int64
	sem := make(chan struct{}, max(1, min(l.cfg.Workers, l.T)))
	l.rowW = newApplier(l.ix, l.cfg.InFlight)
	var wg sync.WaitGroup
	for t := range l.T {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			st, p, err := l.mergeTable(ctx, t)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			rows += st.rows
			entries += st.entries
			written += st.bytes
			pairs = append(pairs, p...)
		})
	}
	wg.Wait()
	errs = append(errs, l.rowW.wait())
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	l.sum.IndexRows, l.sum.IndexEntries = rows, entries
	l.sum.BytesWritten += written
	slices.SortFunc(pairs, func(a, b [2]uint64) int { return slices.Compare(a[:], b[:]) })
	return slices.Compact(pairs), nil
}

type tableStats struct{ rows, entries, bytes int64 }

func (l *loader) mergeTable(ctx context.Context, t int) (tableStats, [][2]uint64, error) {
	var st tableStats
	var pairs [][2]uint64
	m, err := newMerger(l.runPaths(l.kindName(t)))
	if err != nil {
		return st, nil, fmt.Errorf("bulkload: %w", err)
	}
	defer m.close()
	p := l.perms[t]
	rbits := 64 - p.PrefixBits
	var cur []entry // one row's entries, sorted by (key, bucket)
	var rb rowBatch
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		n, b, err := l.writeRow(ctx, t, cur, &rb)
		if err != nil {
			return err
		}
		st.rows++
		st.entries += int64(n)
		st.bytes += b
		l.pRows.Add(1)
		if l.cfg.DedupPath != "" {
			pairs = l.rowPairs(t, cur, pairs)
		}
		cur = cur[:0]
		return nil
	}
	for {
		e, ok, err := m.next()
		if err != nil {
			return st, nil, fmt.Errorf("bulkload: %w", err)
		}
		if !ok {
			break
		}
		if len(cur) > 0 && cur[0].key>>rbits != e.key>>rbits {
			if err := ctx.Err(); err != nil {
				return st, nil, err
			}
			if err := flush(); err != nil {
				return st, nil, err
			}
		}
		cur = append(cur, e)
	}
	if err := flush(); err != nil {
		return st, nil, err
	}
	return st, pairs, l.flushRows(ctx, &rb)
}

// rowBatch collects the mutations of rows written without a read (into a
// fresh index), applied a few thousand rows at a time.
type rowBatch struct {
	muts  []kvindex.Mutation
	bytes int
}

// writeRow writes one row's base sets. Into an index that had no rows in
// this shard's range when the load started, the cells are put directly (a
// resumed load rewrites identical cells); otherwise they are merged under
// the row lock with what the row holds.
func (l *loader) writeRow(ctx context.Context, t int, es []entry, rb *rowBatch) (int, int64, error) {
	p := l.perms[t]
	prefix := p.Prefix(es[0].key)
	row := kvindex.IndexRowKey(nil, t, prefix, p.PrefixBits)
	byBucket := map[uint32][]uint64{}
	var ours []uint64
	for i, e := range es {
		r := p.Residual(e.key)
		s := byBucket[e.aux]
		if len(s) == 0 || s[len(s)-1] != r {
			byBucket[e.aux] = append(s, r)
		}
		if i == 0 || es[i-1].key != e.key {
			ours = append(ours, r)
		}
	}
	n := 0
	for _, s := range byBucket {
		n += len(s)
	}
	if l.cp.FreshIndex {
		muts, err := l.rowMutations(row, 64-p.PrefixBits, byBucket, ours, nil)
		if err != nil {
			return 0, 0, err
		}
		var written int64
		for _, m := range muts {
			written += int64(len(m.Row) + len(m.Qualifier) + len(m.Value))
		}
		rb.muts = append(rb.muts, muts...)
		rb.bytes += int(written)
		if rb.bytes >= l.cfg.ApplyBytes {
			if err := l.flushRows(ctx, rb); err != nil {
				return 0, 0, err
			}
		}
		return n, written, nil
	}
	var written int64
	err := l.ix.UpdateRow(ctx, row, func(cur kvindex.Row) ([]kvindex.Mutation, error) {
		muts, err := l.rowMutations(row, 64-p.PrefixBits, byBucket, ours, &cur)
		written = 0
		for _, m := range muts {
			written += int64(len(m.Row) + len(m.Qualifier) + len(m.Value))
		}
		return muts, err
	})
	return n, written, err
}

func (l *loader) flushRows(ctx context.Context, rb *rowBatch) error {
	if cap(l.rowW.sem) == 1 {
		err := l.ix.Apply(ctx, rb.muts)
		rb.muts, rb.bytes = rb.muts[:0], 0
		return err
	}
	muts := rb.muts
	rb.muts, rb.bytes = nil, 0
	return l.rowW.submit(ctx, muts) // owns muts now
}

// rowMutations builds a row's base-set mutations, merged with the row's
// current content cur (nil: the row is known to be empty).
func (l *loader) rowMutations(row []byte, rbits int, byBucket map[uint32][]uint64, ours []uint64, cur *kvindex.Row) ([]kvindex.Mutation, error) {
	old := map[uint32][][]byte{}
	tombs := map[uint64]bool{}
	if cur != nil {
		for _, c := range cur.Cells {
			q, err := kvindex.ParseIndexQualifier(c.Qualifier)
			if err != nil {
				return nil, fmt.Errorf("%w: row %x: %v", kvindex.ErrCorrupt, row, err)
			}
			switch q.Kind {
			case kvindex.BaseCell:
				if _, ok := byBucket[q.Bucket]; ok {
					old[q.Bucket] = append(old[q.Bucket], c.Value)
				}
			case kvindex.TombstoneCell:
				tombs[q.Residual] = true
			}
		}
	}
	var muts []kvindex.Mutation
	bs := make([]uint32, 0, len(byBucket))
	for b := range byBucket {
		bs = append(bs, b)
	}
	slices.Sort(bs)
	for _, b := range bs {
		set := byBucket[b]
		if len(old[b]) > 0 {
			var have []uint64
			for _, v := range old[b] {
				var err error
				if have, err = kvindex.DecodeBaseSet(have, v, rbits); err != nil {
					return nil, fmt.Errorf("%w: row %x bucket %d: %v", kvindex.ErrCorrupt, row, b, err)
				}
			}
			set = append(slices.Clone(set), have...)
			slices.Sort(set)
			set = slices.Compact(set)
		}
		m, err := l.ix.BaseSetMutations(row, b, set, len(old[b]))
		if err != nil {
			return nil, err
		}
		muts = append(muts, m...)
	}
	// A loaded fingerprint is carried by a document again: its old
	// tombstone must not hide it (as an online insert does).
	for _, r := range ours {
		if tombs[r] {
			muts = append(muts, kvindex.Mutation{Kind: kvindex.DeleteCell, Table: kvindex.TableIndex, Row: row, Qualifier: kvindex.TombstoneQualifier(r)})
		}
	}
	return muts, nil
}

// phase3 counts distinct ids and fingerprints from their runs and adds the
// counters once. It returns the fingerprints carried by several of the
// loaded documents (exact-duplicate groups) when a report is asked for.
func (l *loader) phase3(ctx context.Context) ([]uint64, error) {
	ids, idDups, _, err := l.distinct(l.runPaths("ids"), false)
	if err != nil {
		return nil, err
	}
	fps, _, multi, err := l.distinct(l.runPaths("fps"), l.cfg.DedupPath != "")
	if err != nil {
		return nil, err
	}
	l.sum.Documents, l.sum.DuplicateIDs, l.sum.Fingerprints = ids, idDups, fps
	// The marker makes the counter addition happen once per load.
	markerRow, markerQual := []byte("bulkload"), []byte(l.cp.LoadID)
	rows, err := l.ix.Store().Get(ctx, []kvindex.RowKey{{Table: kvindex.TableMeta, Key: markerRow}})
	if err != nil {
		return nil, err
	}
	for _, c := range rows[0].Cells {
		if string(c.Qualifier) == string(markerQual) {
			return multi, nil // added by an earlier (interrupted) run
		}
	}
	muts := l.ix.CounterMutations(ids, fps)
	muts = append(muts, kvindex.Mutation{Kind: kvindex.Put, Table: kvindex.TableMeta, Row: markerRow, Qualifier: markerQual,
		Value: fmt.Appendf(nil, "documents=%d fingerprints=%d shard=%d/%d", ids, fps, l.cfg.Shard, l.cfg.Shards)})
	if err := l.ix.Apply(ctx, muts); err != nil {
		return nil, err
	}
	if f, ok := l.ix.Store().(flusher); ok {
		return multi, f.Flush()
	}
	return multi, nil
}

// distinct counts distinct keys over runs, the repeats, and (when asked)
// lists the keys that repeat.
func (l *loader) distinct(paths []string, listRepeats bool) (n, repeats int64, repeated []uint64, err error) {
	m, err := newMerger(paths)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("bulkload: %w", err)
	}
	defer m.close()
	var prev uint64
	first := true
	for {
		e, ok, err := m.next()
		if err != nil {
			return 0, 0, nil, fmt.Errorf("bulkload: %w", err)
		}
		if !ok {
			return n, repeats, repeated, nil
		}
		if first || e.key != prev {
			n++
		} else {
			repeats++
			if listRepeats && (len(repeated) == 0 || repeated[len(repeated)-1] != e.key) {
				repeated = append(repeated, e.key)
			}
		}
		prev, first = e.key, false
	}
}

// String formats a summary for people.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "records %d, rejected %d, documents %d (duplicate ids %d), fingerprints %d, index rows %d, ",
		s.Records, s.Rejected, s.Documents, s.DuplicateIDs, s.Fingerprints, s.IndexRows)
	fmt.Fprintf(&b, "near-duplicate pairs %d, duplicate documents %d, bytes written %d, input bytes %d, %.1fs",
		s.DuplicatePairs, s.DuplicateDocuments, s.BytesWritten, s.InputBytes, s.Duration.Seconds())
	if s.Duration > 0 {
		fmt.Fprintf(&b, " (%.0f records/s)", float64(s.Records)/s.Duration.Seconds())
	}
	if s.Resumed {
		b.WriteString(", resumed from a checkpoint")
	}
	return b.String()
}
