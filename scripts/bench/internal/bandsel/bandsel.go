// Package bandsel compares LSH band parameters (b bands of r rows over the
// same 128 densified one-permutation MinHash bins as fingerprint.Bands) on
// the quality benchmark's text: candidate recall on the labelled pairs that
// the decision rule accepts at any distance but the index rows miss
// (simhash distance > 3), and the false-candidate rate from band collisions
// among the corpus documents (per stored document; times N is the expected
// number of extra docs reads per lookup at N documents).
//
//	scripts/eval/run.sh   # once, to build the corpus and the dev pairs
//	go run ./scripts/bench/bandsel scripts/eval/.cache/pairs-1-dev.jsonl scripts/eval/.cache/corpus.jsonl
//
// It rebuilds the bins from the fingerprinter's features (Features) and
// first checks that its b=32, r=4 band 0 equals fingerprint.Bands' (so it
// measures what the index stores); it panics if the recipes drift apart.
package bandsel

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/scripts/eval/pairs"
)

const bins = 128

func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

func sig(hashes []uint64) (d [bins]uint64, ok bool) {
	var m [bins]uint64
	for i := range m {
		m[i] = ^uint64(0)
	}
	for _, h := range hashes {
		for c := range uint64(4) {
			g := mix(h + c*0x9e3779b97f4a7c15)
			b, v := g>>57, g&(1<<57-1)
			m[b] = min(m[b], v)
		}
	}
	last := bins - 1
	for last >= 0 && m[last] == ^uint64(0) {
		last--
	}
	if last < 0 {
		return d, false
	}
	next, dist := m[last], 0
	for k := range bins {
		i := (last - k + bins) % bins
		if m[i] != ^uint64(0) {
			next, dist = m[i], 0
			d[i] = m[i]
			continue
		}
		dist++
		d[i] = next | uint64(dist)<<57
	}
	return d, true
}

type item struct {
	res  fingerprint.Result
	sig  [bins]uint64
	ok   bool
	fail bool
}

func featHashes(fs []fingerprint.Feature) []uint64 {
	out := make([]uint64, 0, len(fs))
	for _, f := range fs {
		if a, b, ok := strings.Cut(f.Text, " "); ok {
			out = append(out, xxhash.Sum64String(a+"\x1f"+b))
		} else {
			out = append(out, xxhash.Sum64String(f.Text))
		}
	}
	return out
}

func compute(f *fingerprint.Fingerprinter, docs []fingerprint.Document) []item {
	out := make([]item, len(docs))
	var wg sync.WaitGroup
	ch := make(chan int)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				r, fs, err := f.Features(docs[i])
				if err != nil {
					out[i].fail = true
					continue
				}
				out[i].res = r
				out[i].sig, out[i].ok = sig(featHashes(fs))
			}
		}()
	}
	for i := range docs {
		ch <- i
	}
	close(ch)
	wg.Wait()
	return out
}

type cfg struct{ b, r int }

func bandKey(s *[bins]uint64, c cfg, band int) [9]uint64 {
	var k [9]uint64
	k[0] = uint64(band)
	for j := range c.r {
		k[1+j] = s[band+j*c.b]
	}
	return k
}

func share(a, b *[bins]uint64, c cfg) bool {
	for band := range c.b {
		if bandKey(a, c, band) == bandKey(b, c, band) {
			return true
		}
	}
	return false
}

// Run runs the bandsel tool with args (its flags and arguments, without the
// command name).
func Run(ctx context.Context, args []string) error {
	if len(args) < 2 {
		return errors.New("usage: bandsel PAIRS.jsonl CORPUS.jsonl")
	}
	f, _ := fingerprint.New(fingerprint.DefaultConfig())
	configs := []cfg{{42, 3}, {32, 4}, {25, 5}, {21, 6}, {16, 8}}
	// Check the reconstruction once.
	{
		r, fs, _ := f.Features(fingerprint.Document{Body: "The city council approved twelve electric buses for the northern routes on Monday, officials said."})
		s, _ := sig(featHashes(fs))
		var buf [33]byte
		buf[0] = 0
		for j := range 4 {
			for k := range 8 {
				buf[1+8*j+k] = byte(s[j*32] >> (8 * k))
			}
		}
		if xxhash.Sum64(buf[:]) != r.Bands[0] {
			panic("reconstruction differs from fingerprint.Bands")
		}
	}
	rule := decide.DefaultRule()
	// Dev pairs: candidate recall for pairs the rule accepts at any distance
	// but the index rows miss (d > 3).
	in, _ := os.Open(args[0])
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var ps []pairs.Pair
	for sc.Scan() {
		var p pairs.Pair
		json.Unmarshal(sc.Bytes(), &p)
		if p.Duplicate {
			ps = append(ps, p)
		}
	}
	var docs []fingerprint.Document
	for _, p := range ps {
		docs = append(docs, fingerprint.Document{Title: p.Original.Title, Body: p.Original.Body}, fingerprint.Document{Title: p.Query.Title, Body: p.Query.Body})
	}
	its := compute(f, docs)
	need := 0
	hit := make([]int, len(configs))
	for i := range ps {
		o, q := its[2*i], its[2*i+1]
		if o.fail || q.fail || !o.ok || !q.ok {
			continue
		}
		side := func(r fingerprint.Result) decide.Side {
			return decide.Side{Sketch: r.Sketch, Chars: r.Chars}
		}
		if bits.OnesCount64(uint64(o.res.Simhash^q.res.Simhash)) <= 3 || !rule.AtAnyDistance(side(q.res), side(o.res)) {
			continue
		}
		need++
		for c := range configs {
			if share(&o.sig, &q.sig, configs[c]) {
				hit[c]++
			}
		}
	}
	fmt.Printf("dev positives accepted at any distance, beyond d=3: %d\n", need)
	for c, cf := range configs {
		fmt.Printf("  b=%d r=%d: candidate recall %.4f (%d missed)\n", cf.b, cf.r, float64(hit[c])/float64(need), need-hit[c])
	}
	// Corpus: band collisions among distinct documents.
	cin, _ := os.Open(args[1])
	sc = bufio.NewScanner(cin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	docs = docs[:0]
	for sc.Scan() {
		var d struct{ Title, Body string }
		json.Unmarshal(sc.Bytes(), &d)
		docs = append(docs, fingerprint.Document{Title: d.Title, Body: d.Body})
	}
	its = compute(f, docs)
	var live []int
	for i, it := range its {
		if !it.fail && it.ok {
			live = append(live, i)
		}
	}
	n := len(live)
	allPairs := float64(n) * float64(n-1) / 2
	fmt.Printf("corpus: %d documents with a signature, %.3g pairs\n", n, allPairs)
	for _, cf := range configs {
		rows := map[[9]uint64][]int32{}
		for _, i := range live {
			for band := range cf.b {
				k := bandKey(&its[i].sig, cf, band)
				rows[k] = append(rows[k], int32(i))
			}
		}
		seen := map[[2]int32]bool{}
		for _, ids := range rows {
			for x := range ids {
				for y := x + 1; y < len(ids); y++ {
					seen[[2]int32{ids[x], ids[y]}] = true
				}
			}
		}
		dup := 0
		for p := range seen {
			a, b := its[p[0]].res, its[p[1]].res
			if rule.AtAnyDistance(decide.Side{Sketch: a.Sketch, Chars: a.Chars}, decide.Side{Sketch: b.Sketch, Chars: b.Chars}) {
				dup++
			}
		}
		false_ := float64(len(seen) - dup)
		rate := false_ / allPairs
		fmt.Printf("  b=%d r=%d: %d colliding pairs (%d the rule accepts), false-candidate rate %.3g per stored doc: %.3g per lookup at 1e6, %.3g at 1e9; band rows/doc %d\n",
			cf.b, cf.r, len(seen), dup, rate, rate*1e6, rate*1e9, cf.b)
	}
	return nil
}
