package sparkjob

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// MapConfig configures a map worker.
type MapConfig struct {
	Meta  Meta
	Parts Parts
	// Format of the lines: bulkload.FormatDocs or FormatFingerprints.
	Format string
	// NewFingerprinter builds the fingerprinter (documents only; default
	// fingerprint.New(fingerprint.DefaultConfig())).
	NewFingerprinter func() (*fingerprint.Fingerprinter, error)
	// FailAfter, when positive, makes Map fail after that many input
	// lines, as a killed task would (for tests of the job's retries).
	FailAfter int64
}

// MapStats are a map worker's counts, its end frame.
type MapStats struct {
	Lines int64 `json:"lines"`
	// InputBytes: the input lines' bytes, each with one end-of-line byte.
	Records    int64 `json:"records"`
	Rejected   int64 `json:"rejected"`
	InputBytes int64 `json:"input_bytes"`
	Cells      int64 `json:"cells"`
	RunBytes   int64 `json:"run_bytes"`
}

// ErrFailAsked is the error of a worker told to fail (FailAfter).
var ErrFailAsked = errors.New("sparkjob: failing as asked")

// Map reads input lines "order TAB where TAB line" from in (order: the
// record's position in the job's input order, a decimal uint64; where:
// how a reject names the line) and writes frames to out: a record or
// reject frame per line, then one run frame per part that got cells, then
// the end frame.
func Map(ctx context.Context, cfg MapConfig, in io.Reader, out io.Writer) (MapStats, error) {
	var st MapStats
	if cfg.Format != bulkload.FormatDocs && cfg.Format != bulkload.FormatFingerprints {
		return st, fmt.Errorf("%w: format %q: want docs or fp", ErrConfig, cfg.Format)
	}
	if err := cfg.Parts.Validate(); err != nil {
		return st, err
	}
	ix, err := cfg.Meta.WorkerIndex(ctx)
	if err != nil {
		return st, err
	}
	var fpr *fingerprint.Fingerprinter
	if cfg.Format == bulkload.FormatDocs {
		if cfg.NewFingerprinter == nil {
			cfg.NewFingerprinter = func() (*fingerprint.Fingerprinter, error) { return fingerprint.New(fingerprint.DefaultConfig()) }
		}
		if fpr, err = cfg.NewFingerprinter(); err != nil {
			return st, err
		}
	}
	m := &mapper{cfg: cfg, ix: ix, enc: bulkload.NewEncoder(ix, fpr), perms: ix.Layout().Permuters(), parts: make([][]cell, cfg.Parts.Total())}
	bw := bufio.NewWriterSize(out, 1<<20)
	br := bufio.NewReaderSize(in, 1<<20)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return st, err
		}
		if len(line) > 0 {
			st.Lines++
			if cfg.FailAfter > 0 && st.Lines > cfg.FailAfter {
				return st, ErrFailAsked
			}
			if err := m.line(bytes.TrimRight(line, "\r\n"), bw, &st); err != nil {
				return st, err
			}
			line = line[:0]
		}
		if err != nil { // io.EOF
			break
		}
		if st.Lines%1024 == 0 && ctx.Err() != nil {
			return st, ctx.Err()
		}
	}
	if err := m.writeRuns(bw, &st); err != nil {
		return st, err
	}
	end, _ := json.Marshal(st)
	if err := writeFrame(bw, FrameEnd, end); err != nil {
		return st, err
	}
	return st, bw.Flush()
}

type mapper struct {
	cfg   MapConfig
	ix    *kvindex.Index
	enc   *bulkload.Encoder
	perms []fingerprint.Permuter
	parts [][]cell
}

// line handles one input line.
func (m *mapper) line(line []byte, w io.Writer, st *MapStats) error {
	orderField, rest, ok1 := bytes.Cut(line, []byte{'\t'})
	where, raw, ok2 := bytes.Cut(rest, []byte{'\t'})
	if !ok1 || !ok2 {
		return fmt.Errorf("%w: input line without order and where fields", ErrConfig)
	}
	order, err := strconv.ParseUint(string(orderField), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: order %q: %v", ErrConfig, orderField, err)
	}
	st.InputBytes += int64(len(raw)) + 1
	rec, err := m.enc.Encode(raw, m.cfg.Format)
	switch {
	case errors.Is(err, bulkload.ErrNotRecord):
		return nil
	case err != nil:
		st.Rejected++
		b, _ := json.Marshal(struct {
			Where  string `json:"where"`
			Reason string `json:"reason"`
		}{string(where), err.Error()})
		return writeFrame(w, FrameReject, b)
	}
	st.Records++
	var head [16]byte
	binary.BigEndian.PutUint64(head[:8], order)
	binary.BigEndian.PutUint64(head[8:], uint64(rec.Fingerprint))
	if err := writeFrame(w, FrameRecord, head[:], []byte(rec.ID)); err != nil {
		return err
	}
	return m.add(rec, order, st)
}

// add buffers a record's index entries and cells by part.
func (m *mapper) add(rec bulkload.Record, order uint64, st *MapStats) error {
	for t, p := range m.perms {
		v := p.Permute(rec.Fingerprint)
		q := make([]byte, 12)
		binary.BigEndian.PutUint32(q, rec.Bucket)
		binary.BigEndian.PutUint64(q[4:], p.Residual(v))
		row := kvindex.IndexRowKey(nil, t, p.Prefix(v), p.PrefixBits)
		part := m.cfg.Parts.indexPart(m.perms, t, v, row)
		m.parts[part] = append(m.parts[part], cell{row: row, qual: q, order: order})
	}
	for _, c := range rec.Cells {
		if c.Kind != storage.Put {
			return fmt.Errorf("sparkjob: unexpected mutation %d of table %s", c.Kind, c.Table)
		}
		var part int
		val := c.Value
		switch c.Table {
		case storage.TableFP:
			part = m.cfg.Parts.fpPart(uint64(rec.Fingerprint))
		case storage.TableBands:
			var err error
			if part, err = m.cfg.Parts.bandPart(c.Row); err != nil {
				return err
			}
			val = binary.BigEndian.AppendUint32(nil, rec.Bucket)
		case storage.TableDocs:
			part = m.cfg.Parts.docPart(c.Row)
		default:
			return fmt.Errorf("sparkjob: unexpected cell of table %s", c.Table)
		}
		m.parts[part] = append(m.parts[part], cell{row: c.Row, qual: c.Qualifier, val: val, order: order})
	}
	st.Cells += int64(len(m.perms) + len(rec.Cells))
	return nil
}

// writeRuns sorts each part's cells and writes them as one run frame.
func (m *mapper) writeRuns(w io.Writer, st *MapStats) error {
	var buf []byte
	for part, cells := range m.parts {
		if len(cells) == 0 {
			continue
		}
		slices.SortFunc(cells, func(a, b cell) int { return compareCells(&a, &b) })
		buf = binary.BigEndian.AppendUint32(buf[:0], uint32(part))
		for i := range cells {
			buf = appendCell(buf, &cells[i])
		}
		st.RunBytes += int64(len(buf) - 4)
		if err := writeFrame(w, FrameRun, buf); err != nil {
			return err
		}
		m.parts[part] = nil
	}
	return nil
}
