package fingerprint

import (
	"maps"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-ego/gse"
)

// benchBody returns about size bytes of test text in one language ("zh" or
// "en"), cut at a character boundary: the long test articles repeated.
func benchBody(tb testing.TB, lang string, size int) string {
	var b strings.Builder
	for b.Len() < size {
		for _, td := range longTexts(tb) {
			if strings.HasPrefix(td.name, lang+"_") {
				b.WriteString(td.doc.Body)
				b.WriteString("\n")
			}
		}
	}
	s := b.String()[:size]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

var benchCases = []struct {
	name string
	lang string
	size int
}{
	{"zh-1KB", "zh", 1 << 10},
	{"zh-5KB", "zh", 5 << 10},
	{"en-1KB", "en", 1 << 10},
	{"en-5KB", "en", 5 << 10},
}

func reportDocs(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

// fingerprintCases runs run as a sub-benchmark on each case's document (a
// title and the case's body), with its bytes and allocations, reporting
// documents per second.
func fingerprintCases(b *testing.B, run func(b *testing.B, doc Document)) {
	for _, bc := range benchCases {
		doc := Document{Title: "江城公交全面换装电动车 Harbor Point approves plant", Body: benchBody(b, bc.lang, bc.size)}
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc.Body)))
			b.ReportAllocs()
			run(b, doc)
			reportDocs(b)
		})
	}
}

// BenchmarkFingerprint: the whole pipeline on one goroutine.
func BenchmarkFingerprint(b *testing.B) {
	f := testFP(b)
	fingerprintCases(b, func(b *testing.B, doc Document) {
		for b.Loop() {
			if _, err := f.Fingerprint(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFingerprintParallel: GOMAXPROCS goroutines sharing one
// Fingerprinter.
func BenchmarkFingerprintParallel(b *testing.B) {
	f := testFP(b)
	fingerprintCases(b, func(b *testing.B, doc Document) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := f.Fingerprint(doc); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkGseSegment is gse's own segmentation of the same Chinese text,
// for comparison: the pipeline's cost over it is normalization, filtering,
// weighting and hashing.
func BenchmarkGseSegment(b *testing.B) {
	f := testFP(b)
	for _, bc := range benchCases[:2] {
		body := []byte(benchBody(b, bc.lang, bc.size))
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				f.seg.Segment(body)
			}
		})
	}
}

// BenchmarkNormalize is the normalization step alone.
func BenchmarkNormalize(b *testing.B) {
	for _, bc := range benchCases {
		body := benchBody(b, bc.lang, bc.size)
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				normalize(body)
			}
		})
	}
}

// BenchmarkNew measures start-up: loading gse's dictionary and stop words
// and parsing the IDF table, with the heap it keeps (MiB-heap, measured
// after a GC) and the wall time (s/load).
func BenchmarkNew(b *testing.B) {
	var keep *Fingerprinter
	var heap float64
	for b.Loop() {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		f, err := New(DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		heap = float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / (1 << 20)
		keep = f
	}
	runtime.KeepAlive(keep)
	b.ReportMetric(heap, "MiB-heap")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/load")
}

// TestNewIsReproducible: every process (each server, the bulk loader,
// compaction, simdexctl) loads its own Fingerprinter, and they must agree:
// a second New loads the same dictionary and vocabulary and gives the same
// results for every test text as the first. Start-up time and heap are
// measured by BenchmarkNew.
func TestNewIsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the dictionaries again")
	}
	a := testFP(t)
	b, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if n := a.seg.Dict.NumTokens(); n == 0 || n != b.seg.Dict.NumTokens() {
		t.Errorf("gse dictionary tokens: %d then %d", n, b.seg.Dict.NumTokens())
	}
	if len(a.words) == 0 || !maps.Equal(a.words, b.words) {
		t.Errorf("IDF and stop-word table: %d entries, then %d (or different values)", len(a.words), len(b.words))
	}
	for _, td := range loadTexts(t) {
		ra, rb := mustFP(t, a, td.doc), mustFP(t, b, td.doc)
		if !reflect.DeepEqual(ra, rb) {
			t.Errorf("%s: two Fingerprinters disagree: simhash %v / %v, sketch equal %v", td.name, ra.Simhash, rb.Simhash, reflect.DeepEqual(ra.Sketch, rb.Sketch))
		}
	}
}

var _ = gse.ZhIdf
