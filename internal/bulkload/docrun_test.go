package bulkload

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

// docRecords returns n documents' cells as Index.DocMutations builds them.
func docRecords(t testing.TB, ix *kvindex.Index, n int) [][]kvindex.Mutation {
	t.Helper()
	var out [][]kvindex.Mutation
	for i := range n {
		d := kvindex.Document{ID: fmt.Sprintf("doc-%d", i), Fingerprint: fingerprint.Fingerprint(uint64(i) * 0x9e3779b97f4a7c15),
			Time: t0.Add(time.Duration(i) * time.Minute), Attrs: map[string]string{"site": fmt.Sprint(i % 3)}}
		m, err := ix.DocMutations(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func writeDocRunFile(t testing.TB, path string, recs [][]kvindex.Mutation) {
	t.Helper()
	w, err := createDocRun(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.add(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
}

// TestDocRunRoundTrip: the records come back in order, byte for byte; an
// empty run is valid; damage anywhere is ErrRun before any record is
// handed out; what is not a plain put is refused when written.
func TestDocRunRoundTrip(t *testing.T) {
	dir := t.TempDir()
	ix := openIndex(t, filepath.Join(dir, "ix"))
	for _, n := range []int{0, 1, 2500} {
		recs := docRecords(t, ix, n)
		p := filepath.Join(dir, fmt.Sprintf("run-%d", n))
		writeDocRunFile(t, p, recs)
		if _, err := os.Stat(p + ".tmp"); !os.IsNotExist(err) {
			t.Errorf("temporary file left: %v", err)
		}
		var got [][]kvindex.Mutation
		if err := readDocRun(p, func(r []kvindex.Mutation) error { got = append(got, r); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(recs) || len(recs) > 0 && !reflect.DeepEqual(got, recs) {
			t.Fatalf("%d records: read back %d, or they differ", len(recs), len(got))
		}
		if n == 0 {
			continue
		}
		b, _ := os.ReadFile(p)
		for _, at := range []int{len(docRunMagic) + 3, len(b) / 2, len(b) - 2} {
			bad := bytes.Clone(b)
			bad[at] ^= 0x10
			os.WriteFile(p, bad, 0o644)
			calls := 0
			err := readDocRun(p, func([]kvindex.Mutation) error { calls++; return nil })
			if !errors.Is(err, ErrRun) || calls > 0 {
				t.Errorf("byte %d of %d flipped: %v after %d records, want ErrRun before any", at, len(b), err, calls)
			}
		}
		os.WriteFile(p, b[:len(b)-1], 0o644)
		if err := readDocRun(p, func([]kvindex.Mutation) error { return nil }); !errors.Is(err, ErrRun) {
			t.Errorf("truncated run: %v, want ErrRun", err)
		}
	}
	w, err := createDocRun(filepath.Join(dir, "refused"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.abort()
	for _, m := range []kvindex.Mutation{
		{Kind: kvindex.DeleteCell, Table: kvindex.TableDocs, Row: []byte("a")},
		{Kind: kvindex.Put, Table: kvindex.TableIndex, Row: []byte("a"), Timestamp: t0},
		{Kind: kvindex.Put, Table: kvindex.TableDocs},
		{Kind: kvindex.Put, Table: 9, Row: []byte("a")},
	} {
		if err := w.add([]kvindex.Mutation{m}); err == nil {
			t.Errorf("%+v accepted", m)
		}
	}
}

// FuzzDocRun: arbitrary bytes never panic the document-run decoder; errors
// wrap ErrRun; what decodes survives a re-encoding.
func FuzzDocRun(f *testing.F) {
	dir := f.TempDir()
	ix := openIndex(f, filepath.Join(dir, "ix"))
	p := filepath.Join(dir, "seed")
	writeDocRunFile(f, p, docRecords(f, ix, 3))
	seed, _ := os.ReadFile(p)
	f.Add(seed)
	writeDocRunFile(f, p, nil)
	empty, _ := os.ReadFile(p)
	f.Add(empty)
	f.Add([]byte("SDXDOC01"))
	f.Add(append([]byte("SDXDOC01"), 1, 2, 0xff, 0xff, 0xff, 0xff, 0x0f))
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs [][]kvindex.Mutation
		err := decodeDocRun(bytes.NewReader(data), func(r []kvindex.Mutation) error { recs = append(recs, r); return nil })
		if err != nil {
			if !errors.Is(err, ErrRun) {
				t.Fatalf("error %v does not wrap ErrRun", err)
			}
			return
		}
		out := filepath.Join(t.TempDir(), "again")
		writeDocRunFile(t, out, recs)
		var again [][]kvindex.Mutation
		if err := readDocRun(out, func(r []kvindex.Mutation) error { again = append(again, r); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(again) != len(recs) || len(recs) > 0 && !reflect.DeepEqual(again, recs) {
			t.Fatalf("decoded records do not survive a re-encoding")
		}
	})
}
