package bulkload

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
)

func TestSortEntries(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	// 300,000 entries take the MSD sort: with skewed keys (crowded top
	// buckets) and with uniform ones.
	for _, n := range []int{0, 1, 100, 5000, 70000, 300000, -300000} {
		for _, sameAux := range []bool{true, false} {
			uniform := n < 0
			n := max(n, -n)
			es := make([]entry, n)
			for i := range es {
				es[i] = entry{key: r.Uint64() >> uint(r.IntN(40)), aux: 7}
				if uniform {
					es[i].key = r.Uint64()
				}
				if !sameAux {
					es[i].aux = uint32(r.IntN(3))
				}
				if i > 0 && i%10 == 0 {
					es[i].key = es[i-1].key // repeats
				}
			}
			want := slices.Clone(es)
			slices.SortFunc(want, entryCmp)
			sortEntries(es, nil)
			if !slices.Equal(es, want) {
				t.Fatalf("n=%d sameAux=%v: not sorted like the comparison sort", n, sameAux)
			}
		}
	}
}

func TestRunRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(2, 2))
	var paths []string
	var all []entry
	for k := range 4 {
		es := make([]entry, 15000*k) // an empty run, and runs of several blocks
		for i := range es {
			// Buckets a few apart, and the extremes (aux deltas of
			// both signs and every width).
			es[i] = entry{key: r.Uint64(), aux: []uint32{0, 1, 20500, 20503, 1<<32 - 1}[r.IntN(5)]}
		}
		sortEntries(es, nil)
		p := filepath.Join(dir, runName(k, "t00"))
		if _, err := writeRun(p, es); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		all = append(all, es...)
	}
	slices.SortFunc(all, entryCmp)
	if got := mergeAll(t, paths); !slices.Equal(got, all) {
		t.Fatalf("merge of %d runs: %d entries, want %d (or order differs)", len(paths), len(got), len(all))
	}
	// Damage is detected: a flipped byte fails the checksum or decoding.
	b, _ := os.ReadFile(paths[1])
	b[len(b)/2] ^= 0x40
	os.WriteFile(paths[1], b, 0o644)
	if err := drain(paths[1]); !errors.Is(err, ErrRun) {
		t.Errorf("damaged run: %v, want ErrRun", err)
	}
	// A whole block cut out (at block boundaries, every remaining block
	// checks out) is caught by the end block's count; a run of the other
	// record kind is refused.
	b, _ = os.ReadFile(paths[3])
	var bounds []int
	for pos := len(runMagic) + 1; ; {
		m, k := binary.Uvarint(b[pos:])
		n, k2 := binary.Uvarint(b[pos+k:])
		if m == 0 {
			break
		}
		bounds = append(bounds, pos)
		pos += k + k2 + int(n) + 4
	}
	if len(bounds) < 3 {
		t.Fatalf("run of %d blocks, want several", len(bounds))
	}
	cut := append(slices.Clone(b[:bounds[1]]), b[bounds[2]:]...)
	os.WriteFile(paths[3], cut, 0o644)
	if err := drain(paths[3]); !errors.Is(err, ErrRun) {
		t.Errorf("run without its second block: %v, want ErrRun", err)
	}
	if _, err := openCellRun(paths[2]); !errors.Is(err, ErrRun) {
		t.Errorf("an entry run opened as cells: %v, want ErrRun", err)
	}
}

// TestRunV2StillRead: an entry run of version 2 (aux as a whole uvarint),
// as a checkpoint directory begun by an older binary holds, is read as it
// was written, and merges with version 3 runs.
func TestRunV2StillRead(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	var want []entry
	var paths []string
	for k, v2 := range []bool{true, false} {
		es := make([]entry, 20000)
		for i := range es {
			es[i] = entry{key: r.Uint64(), aux: 20000 + uint32(r.IntN(13))}
		}
		sortEntries(es, nil)
		p := filepath.Join(dir, runName(k, "t00"))
		var err error
		if v2 {
			err = writeRunV2(p, es)
		} else {
			_, err = writeRun(p, es)
		}
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		want = append(want, es...)
	}
	if b, _ := os.ReadFile(paths[0]); !bytes.HasPrefix(b, runMagicV2) {
		t.Fatalf("the version 2 run starts %q", b[:8])
	}
	slices.SortFunc(want, entryCmp)
	if got := mergeAll(t, paths); !slices.Equal(got, want) {
		t.Fatalf("merged %d entries of a version 2 and a version 3 run, want %d in order", len(got), len(want))
	}
}

// writeRunV2 writes es as a version 2 entry run (the encoding of binaries
// before version 3: aux as a whole uvarint).
func writeRunV2(path string, es []entry) error {
	w, err := createRun(path, kindEntries)
	if err != nil {
		return err
	}
	// createRun wrote version 3's magic into the buffer; the bytes differ
	// in the last digit only.
	w.bw.Reset(w.f)
	w.bw.Write(runMagicV2)
	w.bw.WriteByte(kindEntries)
	var prev uint64
	for _, e := range es {
		d := e.key - prev
		if w.m == 0 {
			d = e.key
		}
		w.block = binary.AppendUvarint(w.block, d)
		w.block = binary.AppendUvarint(w.block, uint64(e.aux))
		prev = e.key
		if err := w.endRecord(); err != nil {
			return w.abort(err)
		}
	}
	_, err = w.finish()
	return err
}

func drain(path string) error {
	r, err := openRun(path)
	if err != nil {
		return err
	}
	defer r.close()
	for {
		ok, err := r.next()
		if err != nil || !ok {
			return err
		}
	}
}

// FuzzRunReader: arbitrary bytes never panic the run decoder, and a decoded
// run is sorted.
func FuzzRunReader(f *testing.F) {
	dir := f.TempDir()
	p := filepath.Join(dir, "seed")
	writeRun(p, []entry{{1, 0}, {5, 2}, {5, 3}, {1 << 60, 1}})
	seed, _ := os.ReadFile(p)
	f.Add(seed)
	f.Add(seed[:len(seed)-5])
	f.Add([]byte("SDXRUN02e"))
	f.Add([]byte("SDXRUN03e"))
	f.Add(append([]byte("SDXRUN03e"), 2, 4, 1, 0, 5, 3, 0, 0, 0, 0)) // a bad checksum
	if err := writeRunV2(p, []entry{{1, 0}, {5, 2}, {5, 3}, {1 << 60, 1}}); err == nil {
		v2, _ := os.ReadFile(p)
		f.Add(v2)
	}
	f.Add(append([]byte("SDXRUN02e"), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01))
	f.Add(append([]byte("SDXRUN02e"), 2, 3, 1, 0, 5, 0, 0, 0, 0)) // a bad checksum
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := newRunReader("fuzz", bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrRun) {
				t.Fatalf("error %v does not wrap ErrRun", err)
			}
			return
		}
		var prev entry
		for i := 0; ; i++ {
			ok, err := r.next()
			if err != nil {
				if !errors.Is(err, ErrRun) {
					t.Fatalf("error %v does not wrap ErrRun", err)
				}
				return
			}
			if !ok {
				return
			}
			if i > 0 && entryCmp(r.cur, prev) < 0 {
				t.Fatalf("decoded entries out of order: %v after %v", r.cur, prev)
			}
			prev = r.cur
		}
	})
}

func TestParseFPLine(t *testing.T) {
	tests := []struct {
		line   string
		id     string
		fp     uint64
		at     time.Time
		errHas string
	}{
		{line: "a,0123456789abcdef,2026-01-02T03:04:05Z", id: "a", fp: 0x0123456789abcdef, at: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{line: "b\t81985529216486895\t1700000000", id: "b", fp: 81985529216486895, at: time.Unix(1700000000, 0).UTC()},
		{line: " c , 0xff , 1700000000.5 ", id: "c", fp: 0xff, at: time.Unix(1700000000, 5e8).UTC()},
		{line: "d,d:1234567890123456,1", id: "d", fp: 1234567890123456, at: time.Unix(1, 0).UTC()},
		{line: "", errHas: "skip"},
		{line: "# comment", errHas: "skip"},
		{line: "a,b", errHas: "want 3 fields"},
		{line: "a,xyz,1", errHas: "fingerprint"},
		{line: "a,1,", errHas: "missing time"},
		{line: "a,1,tomorrow", errHas: "RFC 3339"},
		{line: "a,1,NaN", errHas: "RFC 3339"},
		{line: "a,1,1e300", errHas: "RFC 3339"},
	}
	for _, tc := range tests {
		rec, err := parseFPLine([]byte(tc.line))
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%q: err %v, want %q", tc.line, err, tc.errHas)
			}
			continue
		}
		if err != nil || rec.id != tc.id || uint64(rec.fp) != tc.fp || !rec.at.Equal(tc.at) {
			t.Errorf("%q: %+v %v", tc.line, rec, err)
		}
	}
}

func TestParseDocLine(t *testing.T) {
	good := `{"id":"x","title":"T","text":"body","time":"2026-01-02T00:00:00Z","attrs":{"a":"b"}}`
	rec, err := parseDocLine([]byte(good))
	if err != nil || rec.id != "x" || rec.title != "T" || rec.text != "body" || rec.attrs["a"] != "b" || rec.at.Year() != 2026 {
		t.Fatalf("%+v %v", rec, err)
	}
	if rec, err := parseDocLine([]byte(`{"id":"y","text":"t","time":1700000000}`)); err != nil || rec.at.Unix() != 1700000000 {
		t.Errorf("numeric time: %+v %v", rec, err)
	}
	for line, want := range map[string]string{
		`{"text":"t","time":1}`:                 "missing id",
		`{"id":"a","time":1}`:                   "missing text",
		`{"id":"a","text":"t"}`:                 "missing time",
		`{"id":"a","text":"t","time":"soon"}`:   "RFC 3339",
		`{"id":"a","text":"t","time":1,"z":1}`:  "unknown field",
		`{"id":"a","text":"t","time":1} {}`:     "more than one",
		`{"id":1,"text":"t","time":1}`:          "bad JSON",
		`[`:                                     "bad JSON",
		`{"id":"a","text":"t","time":{"x":1}}`:  "RFC 3339",
		`{"id":"a","text":"t","time":"\u0000"}`: "RFC 3339",
	} {
		if _, err := parseDocLine([]byte(line)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", line, err, want)
		}
	}
}

// FuzzParseLines: no input line panics either parser.
func FuzzParseLines(f *testing.F) {
	for _, s := range []string{"a,0123456789abcdef,1", "a\t1\t2026-01-01T00:00:00Z", `{"id":"a","text":"t","time":1}`, `{"id":"a","text":"t","time":"2026-01-01T00:00:00Z","attrs":{"k":"v"}}`, "", "\xff,\xff,\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		parseFPLine(line)
		parseDocLine(line)
	})
}

func TestLineReaderLongLine(t *testing.T) {
	data := "short\n" + strings.Repeat("x", MaxLineBytes+10) + "\nafter\nlast-without-newline"
	lr := &lineReader{br: bufioReader(data)}
	var got []string
	var long []bool
	for {
		line, tooLong, err := lr.next()
		if err != nil {
			break
		}
		got = append(got, string(line[:min(len(line), 10)]))
		long = append(long, tooLong)
	}
	if !slices.Equal(got, []string{"short", "xxxxxxxxxx", "after", "last-witho"}) || !slices.Equal(long, []bool{false, true, false, false}) {
		t.Errorf("lines %q long %v", got, long)
	}
}

func TestConfigParsing(t *testing.T) {
	for s, want := range map[string]int64{"512MiB": 512 << 20, "2G": 2 << 30, "1.5GiB": 3 << 29, "100": 100, "64 MB": 64e6} {
		if got, err := ParseBytes(s); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "x", "-1G", "1e30"} {
		if _, err := ParseBytes(s); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseBytes(%q): %v", s, err)
		}
	}
	if i, n, err := ParseShard("2/5"); i != 2 || n != 5 || err != nil {
		t.Errorf("ParseShard: %d %d %v", i, n, err)
	}
	for _, s := range []string{"5/5", "-1/2", "1", "a/b", "0/0"} {
		if _, _, err := ParseShard(s); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseShard(%q): %v", s, err)
		}
	}
	bad := []Config{{}, {Inputs: []string{"x"}}, {Inputs: []string{"x"}, CheckpointDir: "d", Memory: 1}, {Inputs: []string{"x"}, CheckpointDir: "d", Shard: 3, Shards: 2}, {Inputs: []string{"x"}, CheckpointDir: "d", Format: "xml"}}
	for _, c := range bad {
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// TestResumeRefusesOtherInputs: a checkpoint directory belongs to one load.
func TestResumeRefusesOtherInputs(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.csv", []byte("x,0123456789abcdef,1\n"))
	b := writeFile(t, dir, "b.csv", []byte("y,0123456789abcdee,1\n"))
	ix := openIndex(t, filepath.Join(dir, "ix"))
	cfg := Config{Inputs: []string{a}, CheckpointDir: filepath.Join(dir, "cp")}
	if _, err := Run(bg, ix, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Inputs = []string{b}
	if _, err := Run(bg, ix, cfg); !errors.Is(err, ErrInputChanged) {
		t.Errorf("err %v, want ErrInputChanged", err)
	}
}

// parseFPLineRef is the straightforward parser (split, trim, fingerprint.Parse,
// parseTime) that the allocation-free parseFPLine must agree with.
func parseFPLineRef(line []byte) (record, error) {
	s := strings.TrimSpace(string(line))
	if s == "" || s[0] == '#' {
		return record{}, errSkip
	}
	sep := ","
	if strings.Contains(s, "\t") {
		sep = "\t"
	}
	parts := strings.Split(s, sep)
	if len(parts) != 3 {
		return record{}, fmt.Errorf("want 3 fields")
	}
	fp, err := fingerprint.Parse(parts[1])
	if err != nil {
		return record{}, err
	}
	at, err := parseTime(strings.TrimSpace(parts[2]))
	if err != nil {
		return record{}, err
	}
	return record{id: strings.TrimSpace(parts[0]), fp: fp, at: at}, nil
}

// TestParseFPLineMatchesReference: on generated lines mixing every field
// form, separators, spaces and garbage, the fast parser accepts exactly
// what the reference accepts, with the same result.
func TestParseFPLineMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	for range 20000 {
		fp := pick(fmt.Sprintf("%016x", r.Uint64()), fmt.Sprintf("%016X", r.Uint64()), fmt.Sprint(r.Uint64()), "0x1f", "d:123", "0123456789abcdeg", " 0123456789abcdef", "", "-1")
		at := pick(fmt.Sprint(r.Int64N(2e9)), "1700000000.25", "2026-01-02T03:04:05Z", "00000000001", "123456789012", "", "x1", "+5")
		id := pick("a", " b ", "id-"+fmt.Sprint(r.IntN(100)), "")
		sep := pick(",", "\t")
		line := id + sep + fp + sep + at
		if r.IntN(10) == 0 {
			line += sep + "extra"
		}
		got, gerr := parseFPLine([]byte(line))
		want, werr := parseFPLineRef([]byte(line))
		if (gerr == nil) != (werr == nil) || (gerr == nil && (got.id != want.id || got.fp != want.fp || !got.at.Equal(want.at))) {
			t.Fatalf("%q: fast %+v %v, reference %+v %v", line, got, gerr, want, werr)
		}
	}
}

// BenchmarkSortEntries sorts a spill-sized buffer of permuted
// fingerprints (uniform keys, 13 time buckets) with each radix sort.
func BenchmarkSortEntries(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	src := make([]entry, 1<<20)
	for i := range src {
		src[i] = entry{key: r.Uint64(), aux: 20000 + uint32(r.IntN(13))}
	}
	for _, sorter := range []struct {
		name string
		fn   func(es, scratch []entry) []entry
	}{{"lsd", lsdSortEntries}, {"msd", msdSortEntries}} {
		b.Run(sorter.name, func(b *testing.B) {
			es := make([]entry, len(src))
			var scratch []entry
			for b.Loop() {
				copy(es, src)
				scratch = sorter.fn(es, scratch)
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(len(src)), "ns/entry")
		})
	}
}

// TestRowBucketPaths: rows regrouped by bucket through the slot table and
// through binary search (rows of a wide bucket span) give the same index.
func TestRowBucketPaths(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "fps.csv", []byte(fpLines(genFPs(12, 1500))))
	slot := openIndex(t, filepath.Join(dir, "slot"))
	if _, err := Run(bg, slot, withCP(baseConfig(dir, in), filepath.Join(dir, "cp1"))); err != nil {
		t.Fatal(err)
	}
	defer func(v uint64) { maxSlotSpan = v }(maxSlotSpan)
	maxSlotSpan = 0
	search := openIndex(t, filepath.Join(dir, "search"))
	if _, err := Run(bg, search, withCP(baseConfig(dir, in), filepath.Join(dir, "cp2"))); err != nil {
		t.Fatal(err)
	}
	if d := diff(dump(t, slot, "bulkload"), dump(t, search, "bulkload")); d != "" {
		t.Errorf("the two bucket paths differ:\n%s", d)
	}
}

// TestBadIDsRejected: ids the index refuses (control characters, too long,
// not UTF-8) are rejected with the index's reason, and the good lines
// around them load (the id check is DocCells').
func TestBadIDsRejected(t *testing.T) {
	dir := t.TempDir()
	good := genFPs(21, 3)
	lines := fpLines(good[:1]) +
		"a\x01b,0123456789abcdef,2024-01-02T00:00:00Z\n" +
		strings.Repeat("x", 2000) + ",0123456789abcdef,2024-01-02T00:00:00Z\n" +
		"\xff\xfe,0123456789abcdef,2024-01-02T00:00:00Z\n" +
		fpLines(good[1:])
	in := writeFile(t, dir, "ids.csv", []byte(lines))
	ix := openIndex(t, filepath.Join(dir, "ix"))
	sum, err := Run(bg, ix, baseConfig(dir, in))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 3 || sum.Rejected != 3 {
		t.Fatalf("records %d rejected %d, want 3 and 3", sum.Records, sum.Rejected)
	}
	rej := readLines(t, filepath.Join(dir, "cp", "rejects.jsonl"))
	want := []string{"control character", "at most", "UTF-8"}
	for i, line := range rej {
		var r reject
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Line != int64(i+2) || !strings.Contains(r.Reason, want[i]) {
			t.Errorf("reject %d: line %d %q, want line %d naming %q", i, r.Line, r.Reason, i+2, want[i])
		}
	}
}
