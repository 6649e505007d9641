package sparkjob

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/pebblestore"
)

// Superseded names the records that a later record of the same id
// replaces (the last record of an id in input order wins, as in a load)
// and the fingerprints only such records carry, whose index entries are
// left out: what a load leaves out for repeated ids.
type Superseded struct {
	Records []RecordRef `json:"records"`
	NoIndex []uint64    `json:"no_index"`
}

// RecordRef names one input record.
type RecordRef struct {
	ID    string `json:"id"`
	Order uint64 `json:"order"`
}

// WriteConfig configures a write worker.
type WriteConfig struct {
	Meta       Meta
	Parts      Parts
	Part       int
	Superseded Superseded
	// OutDir is the job's directory of parts: the part's sstables end up
	// in OutDir/part-NNNNN (PartDir), renamed there when complete.
	OutDir string
	// FailAfter, when positive, makes Write fail after merging that many
	// cells of its runs, as a killed task would (for tests of the job's
	// retries).
	FailAfter int64
}

// WriteStats are what a write worker wrote.
type WriteStats struct {
	Part    int    `json:"part"`
	Table   string `json:"table"`
	Runs    int    `json:"runs"`
	Files   int    `json:"files"`
	Cells   int64  `json:"cells"`
	Rows    int64  `json:"rows"`
	Entries int64  `json:"entries"`
	Bytes   int64  `json:"bytes"`
	// HFiles are the part's HFiles (a load into HBase), their paths
	// relative to the part's directory, in key order.
	HFiles []bulkload.HFile `json:"hfiles,omitempty"`
}

// PartDir is where part's sstables or HFiles are once written.
func PartDir(outDir string, part int) string {
	return filepath.Join(outDir, fmt.Sprintf("part-%05d", part))
}

// Write reads the part's run frames from in, merges them and writes the
// part's cells as sstables (HFiles for HBase) into PartDir(OutDir, Part).
// It works in a temporary directory beside it and renames that into place
// at the end, so a rerun of the same part (a retried task) replaces it
// whole.
func Write(ctx context.Context, cfg WriteConfig, in io.Reader) (WriteStats, error) {
	st := WriteStats{Part: cfg.Part}
	if err := cfg.Parts.Validate(); err != nil {
		return st, err
	}
	if cfg.Part < 0 || cfg.Part >= cfg.Parts.Total() {
		return st, fmt.Errorf("%w: part %d of %d", ErrConfig, cfg.Part, cfg.Parts.Total())
	}
	table := cfg.Parts.Table(cfg.Part)
	st.Table = table.String()
	ix, err := cfg.Meta.WorkerIndex(ctx)
	if err != nil {
		return st, err
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return st, err
	}
	tmp, err := os.MkdirTemp(cfg.OutDir, fmt.Sprintf(".part-%05d-", cfg.Part))
	if err != nil {
		return st, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	runs, spool, err := spoolRuns(in, cfg.Part, filepath.Join(tmp, "spool"))
	if err != nil {
		return st, err
	}
	defer spool.Close()
	st.Runs = len(runs)
	w, err := newSink(cfg.Meta, table, tmp)
	if err != nil {
		return st, err
	}
	pw := &partWriter{cfg: cfg, w: w, st: &st, bw: ix.BulkWriter(), buckets: ix.Buckets(), perms: ix.Layout().Permuters(), table: table}
	pw.tw, pw.timed = w.(storage.TimedCellPutter)
	pw.index(cfg.Superseded)
	// Into a non-empty index: the index rows go to the driver, which
	// merges them into the stored rows; the ids and fingerprints to the
	// driver's check against the stored documents.
	var side *os.File
	sideName := ""
	switch {
	case table == storage.TableIndex && cfg.Meta.MergeIndex:
		sideName = MergeRowsFile
	case (table == storage.TableDocs || table == storage.TableFP) && cfg.Meta.CheckStored:
		sideName = PlanCellsFile
	}
	if sideName != "" {
		if side, err = os.Create(filepath.Join(tmp, sideName)); err != nil {
			return st, errors.Join(err, w.Abort())
		}
		defer side.Close()
		pw.side = bufio.NewWriterSize(side, 1<<20)
	}
	if err := mergeRuns(ctx, spool, runs, pw.put); err != nil {
		return st, errors.Join(err, w.Abort())
	}
	if err := pw.flush(); err != nil {
		return st, errors.Join(err, w.Abort())
	}
	if side != nil {
		if err := errors.Join(pw.side.Flush(), side.Sync(), side.Close()); err != nil {
			return st, errors.Join(err, w.Abort())
		}
	}
	if st.Files, st.HFiles, err = w.finish(); err != nil {
		return st, err
	}
	if err := errors.Join(spool.Close(), os.Remove(filepath.Join(tmp, "spool"))); err != nil {
		return st, err
	}
	if err := writeJSON(filepath.Join(tmp, "_SUCCESS"), st); err != nil {
		return st, err
	}
	final := PartDir(cfg.OutDir, cfg.Part)
	if err := os.RemoveAll(final); err != nil {
		return st, err
	}
	if err := os.Rename(tmp, final); err != nil {
		return st, err
	}
	ok = true
	return st, nil
}

// The files a write task leaves for the driver in a load into a non-empty
// index (Meta.MergeIndex, Meta.CheckStored), runs in the frames' run
// encoding (order 0):
//
//   - MergeRowsFile, of an index part: the part's index rows, a cell per
//     row and bucket, its qualifier the bucket (4 bytes), its value the
//     bucket's residuals, sorted and distinct (8 bytes each);
//   - PlanCellsFile, of a docs or fp part: what the driver plans the
//     load with (bulkload.Planner). Of a docs part, every docs cell of
//     its runs, superseded ones too, in order, the qualifier prefixed
//     with 1 for a cell written and 0 for a superseded record's; of an
//     fp part, every fp cell written.
const (
	MergeRowsFile = "merge-rows.run"
	PlanCellsFile = "plan-cells.run"
)

// sink takes a part's sorted cells: sstables of the embedded store, or
// on HBase the HFiles a load's import writes (timed: index and band cells
// carry their time bucket's start).
type sink interface {
	storage.CellPutter
	// finish closes the files and returns how many there are (and the
	// HFiles, relative to the part's directory).
	finish() (int, []bulkload.HFile, error)
	Abort() error
}

type sstSink struct{ *pebblestore.FileWriter }

func (s sstSink) finish() (int, []bulkload.HFile, error) {
	paths, err := s.Finish()
	return len(paths), nil, err
}

type hfileSink struct{ *bulkload.HFileWriter }

func (s hfileSink) finish() (int, []bulkload.HFile, error) {
	files, err := s.Finish()
	for i := range files {
		files[i].Path = filepath.Base(files[i].Path)
	}
	return len(files), files, err
}

// newSink returns the writer of table's cells into dir.
func newSink(m Meta, table storage.Table, dir string) (sink, error) {
	if m.HBase == nil {
		w, err := pebblestore.NewFileWriter(table, dir, m.TableFormat, 0)
		return sstSink{w}, err
	}
	w, err := bulkload.NewHFileWriter(bulkload.HFileConfig{Table: hbasestore.TableName(m.HBase.Namespace, table),
		Family: []byte(m.HBase.Family), Dir: dir, BlockSize: m.HBase.BlockSizes[table.String()], Now: time.UnixMilli(m.HBase.NowMillis),
		FileMode: m.HBase.FileMode})
	return hfileSink{w}, err
}

// section is one run's place in the spool file.
type section struct{ off, n int64 }

// spoolRuns copies the run frames of in to a spool file and returns where
// each run is in it, and the file, open for reading.
func spoolRuns(in io.Reader, part int, path string) ([]section, *os.File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	br := bufio.NewReaderSize(in, 1<<20)
	var runs []section
	var off int64
	var buf []byte
	for {
		kind, payload, err := readFrame(br, buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil && (kind != FrameRun || len(payload) < 4) {
			err = fmt.Errorf("%w: frame %q on a write worker's input, want runs", ErrConfig, kind)
		}
		if err == nil && int(binary.BigEndian.Uint32(payload)) != part {
			err = fmt.Errorf("%w: a run of part %d on the writer of part %d", ErrConfig, binary.BigEndian.Uint32(payload), part)
		}
		if err == nil {
			_, err = bw.Write(payload[4:])
		}
		if err != nil {
			return nil, nil, errors.Join(err, f.Close())
		}
		buf = payload
		runs = append(runs, section{off, int64(len(payload) - 4)})
		off += int64(len(payload) - 4)
	}
	if err := bw.Flush(); err != nil {
		return nil, nil, errors.Join(err, f.Close())
	}
	return runs, f, nil
}

// cursor is one run being merged.
type cursor struct {
	rr  runReader
	c   cell
	idx int
}

type cursorHeap []*cursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	if c := compareCells(&h[i].c, &h[j].c); c != 0 {
		return c < 0
	}
	return h[i].idx < h[j].idx
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergeRuns calls put with every cell of the runs in (row, qualifier,
// order) order. The cell's slices are valid during the call only.
func mergeRuns(ctx context.Context, f *os.File, runs []section, put func(*cell) error) error {
	bufSize := 64 << 10
	if len(runs) > 1024 {
		bufSize = max(4<<10, (64<<20)/len(runs))
	}
	h := make(cursorHeap, 0, len(runs))
	for i, s := range runs {
		cur := &cursor{rr: runReader{r: bufio.NewReaderSize(io.NewSectionReader(f, s.off, s.n), bufSize)}, idx: i}
		more, err := cur.rr.next(&cur.c)
		if err != nil {
			return err
		}
		if more {
			h = append(h, cur)
		}
	}
	heap.Init(&h)
	for n := 0; len(h) > 0; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		cur := h[0]
		if err := put(&cur.c); err != nil {
			return err
		}
		more, err := cur.rr.next(&cur.c)
		if err != nil {
			return err
		}
		if more {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil
}

// partWriter turns the merged cells of a part into the stored cells: base
// sets of index rows, or the last cell of each key of the other tables,
// without superseded records.
type partWriter struct {
	cfg     WriteConfig
	w       sink
	tw      storage.TimedCellPutter
	timed   bool
	buckets storage.Buckets
	st      *WriteStats
	bw      *kvindex.BulkWriter
	perms   []fingerprint.Permuter
	table   storage.Table
	skip    map[RecordRef]bool
	noIndex map[uint64]bool
	// merged counts the cells of the runs merged so far.
	merged int64
	// side is the file for the driver (MergeRowsFile, RowKeysFile), nil
	// without one; rec its record buffer.
	side *bufio.Writer
	rec  []byte

	// index rows: the row and bucket being gathered and its residuals.
	row       []byte
	bucket    uint32
	residuals []uint64
	// other tables: the cell held until a cell of another key comes.
	pending  cell
	havePend bool
}

func (pw *partWriter) index(s Superseded) {
	if len(s.Records) > 0 {
		pw.skip = make(map[RecordRef]bool, len(s.Records))
		for _, r := range s.Records {
			pw.skip[r] = true
		}
	}
	if len(s.NoIndex) > 0 {
		pw.noIndex = make(map[uint64]bool, len(s.NoIndex))
		for _, f := range s.NoIndex {
			pw.noIndex[f] = true
		}
	}
}

func (pw *partWriter) put(c *cell) error {
	if pw.cfg.FailAfter > 0 && pw.merged >= pw.cfg.FailAfter {
		return ErrFailAsked
	}
	pw.merged++
	if pw.table == storage.TableIndex {
		return pw.putEntry(c)
	}
	id := c.qual
	if pw.table == storage.TableDocs {
		id = c.row
	}
	superseded := pw.skip != nil && pw.skip[RecordRef{string(id), c.order}]
	if pw.table == storage.TableDocs && pw.side != nil {
		flag := byte(1)
		if superseded {
			flag = 0
		}
		pw.rec = appendCell(pw.rec[:0], &cell{row: c.row, qual: append([]byte{flag}, c.qual...), val: c.val})
		if _, err := pw.side.Write(pw.rec); err != nil {
			return err
		}
	}
	if superseded {
		return nil
	}
	if pw.havePend && bytes.Equal(pw.pending.row, c.row) && bytes.Equal(pw.pending.qual, c.qual) {
		// The same cell from a later record: the later one's value.
		pw.pending.val = append(pw.pending.val[:0], c.val...)
		return nil
	}
	if err := pw.flushCell(); err != nil {
		return err
	}
	pw.pending.row = append(pw.pending.row[:0], c.row...)
	pw.pending.qual = append(pw.pending.qual[:0], c.qual...)
	pw.pending.val = append(pw.pending.val[:0], c.val...)
	pw.havePend = true
	return nil
}

func (pw *partWriter) flushCell() error {
	if !pw.havePend {
		return nil
	}
	pw.havePend = false
	p := &pw.pending
	if !bytes.Equal(p.row, pw.lastRow()) {
		pw.st.Rows++
		pw.row = append(pw.row[:0], p.row...)
	}
	if pw.table == storage.TableFP && pw.side != nil {
		pw.rec = appendCell(pw.rec[:0], &cell{row: p.row, qual: p.qual})
		if _, err := pw.side.Write(pw.rec); err != nil {
			return err
		}
	}
	pw.st.Cells++
	if pw.table == storage.TableBands {
		// The run value is the document's time bucket; the stored cell
		// is empty, stamped with the bucket's start where cells carry a
		// time (HBase: a family TTL expires it with the document's index
		// cells), as a load writes it.
		if len(p.val) != 4 {
			return fmt.Errorf("sparkjob: band cell %x/%x with a value of %d bytes", p.row, p.qual, len(p.val))
		}
		pw.st.Bytes += int64(len(p.row) + len(p.qual))
		if pw.timed {
			return pw.tw.PutAt(p.row, p.qual, []byte{}, pw.buckets.Start(binary.BigEndian.Uint32(p.val)))
		}
		return pw.w.Put(p.row, p.qual, nil)
	}
	pw.st.Bytes += int64(len(p.row) + len(p.qual) + len(p.val))
	return pw.w.Put(p.row, p.qual, p.val)
}

func (pw *partWriter) lastRow() []byte { return pw.row }

// putEntry gathers an index entry into its row's bucket set.
func (pw *partWriter) putEntry(c *cell) error {
	if len(c.qual) != 12 || len(c.row) < 1 || int(c.row[0]) >= len(pw.perms) {
		return fmt.Errorf("sparkjob: corrupt index entry %x/%x", c.row, c.qual)
	}
	bucket, r := binary.BigEndian.Uint32(c.qual), binary.BigEndian.Uint64(c.qual[4:])
	if pw.noIndex != nil {
		p := pw.perms[c.row[0]]
		var prefix uint64
		for _, b := range c.row[1:] {
			prefix = prefix<<8 | uint64(b)
		}
		if pw.noIndex[uint64(p.Unpermute(p.Join(prefix, r)))] {
			return nil
		}
	}
	switch {
	case !bytes.Equal(c.row, pw.row):
		if err := pw.flushSet(); err != nil {
			return err
		}
		pw.row = append(pw.row[:0], c.row...)
		pw.bucket = bucket
		pw.st.Rows++
	case bucket != pw.bucket:
		if err := pw.flushSet(); err != nil {
			return err
		}
		pw.bucket = bucket
	case len(pw.residuals) > 0 && pw.residuals[len(pw.residuals)-1] == r:
		return nil // the same entry from another record
	}
	pw.residuals = append(pw.residuals, r)
	return nil
}

// flushSet writes the gathered bucket set of the current row.
func (pw *partWriter) flushSet() error {
	if len(pw.residuals) == 0 {
		return nil
	}
	if pw.side != nil {
		c := cell{row: pw.row, qual: binary.BigEndian.AppendUint32(nil, pw.bucket)}
		for _, r := range pw.residuals {
			c.val = binary.BigEndian.AppendUint64(c.val, r)
		}
		pw.rec = appendCell(pw.rec[:0], &c)
		if _, err := pw.side.Write(pw.rec); err != nil {
			return err
		}
		pw.st.Entries += int64(len(pw.residuals))
		pw.residuals = pw.residuals[:0]
		return nil
	}
	cells, bytes, err := pw.bw.PutBaseSets(pw.w, pw.row, []kvindex.BucketSet{{Bucket: pw.bucket, Residuals: pw.residuals}})
	pw.st.Cells += int64(cells)
	pw.st.Bytes += bytes
	if err != nil {
		return fmt.Errorf("sparkjob: %w", err)
	}
	pw.st.Entries += int64(len(pw.residuals))
	pw.residuals = pw.residuals[:0]
	return nil
}

// flush writes what is held at the end.
func (pw *partWriter) flush() error {
	if pw.table == storage.TableIndex {
		return pw.flushSet()
	}
	return pw.flushCell()
}
