package sparkjob

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/detect"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/internal/testmails"
	"github.com/simdex/simdex/kvindex"
)

// writeDedupCorpus writes documents with planted near-duplicate groups
// (an original, copies with a word or two changed, a copy of a copy, a
// copy with a sentence added, a truncation), unrelated documents, short
// notes, ids repeated across the files and bad lines, in two files.
func writeDedupCorpus(t *testing.T, dir string, groups, unrelated int) []string {
	t.Helper()
	r := rand.New(rand.NewPCG(11, 12))
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("%c%c%c%c%c", 'a'+r.IntN(26), 'a'+r.IntN(26), 'a'+r.IntN(26), 'a'+r.IntN(26), 'a'+r.IntN(26))
	}
	sentence := func() string {
		w := make([]string, 8+r.IntN(10))
		for i := range w {
			w[i] = vocab[r.IntN(len(vocab))]
		}
		return strings.Join(w, " ") + "."
	}
	text := func(n int) []string {
		s := make([]string, n)
		for i := range s {
			s[i] = sentence()
		}
		return s
	}
	edit := func(s []string, words int) []string {
		s = slices.Clone(s)
		for range words {
			i := r.IntN(len(s))
			w := strings.Fields(s[i])
			w[r.IntN(len(w))] = vocab[r.IntN(len(vocab))]
			s[i] = strings.Join(w, " ")
		}
		return s
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	docText := func(id, text string) string {
		b, _ := json.Marshal(map[string]any{"id": id, "text": text, "time": t0.Add(time.Duration(r.IntN(1000)) * time.Hour).Format(time.RFC3339)})
		return string(b)
	}
	doc := func(id string, sents []string) string { return docText(id, strings.Join(sents, " ")) }
	var lines [2][]string
	n := 0
	add := func(sents []string) {
		f := r.IntN(2)
		lines[f] = append(lines[f], doc(fmt.Sprintf("d%05d", n), sents))
		n++
	}
	for g := range groups {
		orig := text(8 + r.IntN(12))
		add(orig)
		c := edit(orig, 1)
		add(c)
		add(edit(c, 1)) // a copy of a copy
		if g%2 == 0 {
			add(append(edit(orig, 1), sentence()))
		}
		if g%3 == 0 {
			add(orig[:len(orig)*2/3])
		}
		if g%4 == 0 {
			// A quotation of the original's first sentence: far in
			// simhash, found through the text key they share.
			lines[g%2] = append(lines[g%2], doc(fmt.Sprintf("quote-%d", g), orig[:1]))
		}
	}
	for range unrelated {
		add(text(3 + r.IntN(15)))
	}
	for i := range 20 {
		add([]string{"A short note about " + vocab[i] + "."})
	}
	// One author's mails on a list (internal/testmails):
	// one-sentence bodies above a long shared footer, within a few bits of
	// each other, and a restyled copy of the first; only the copy is a
	// duplicate once the footer is known for template.
	mails := testmails.Load()
	mail := mails.Mail
	for i, b := range append(slices.Clone(mails.Bodies), mails.New) {
		lines[i%2] = append(lines[i%2], docText(fmt.Sprintf("mail-%d", i), mail(b)))
	}
	lines[1] = append(lines[1], docText("mail-copy", testmails.Restyled(mail(mails.Bodies[0]))))
	// Repeated ids (the later file's record wins) and bad lines.
	for i := range 5 {
		lines[1] = append(lines[1], doc(fmt.Sprintf("d%05d", i*7), text(6)))
	}
	lines[0] = append(lines[0], `{"id":"bad","text":"x","time":"soon"}`, `not json`, ``)
	var paths []string
	for f, ls := range lines {
		p := filepath.Join(dir, fmt.Sprintf("part-%d.jsonl", f))
		if err := os.WriteFile(p, []byte(strings.Join(ls, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// runDedupJob does in-process what spark/simdex_dedup.py does: map the
// input (each file in two partitions), keep the last record of each id,
// join on block keys (and bands), judge the candidates in two partitions
// and label the components.
func runDedupJob(t *testing.T, cfg DedupConfig, paths []string) DedupResult {
	t.Helper()
	var res DedupResult
	var frames []docFrame
	slices.Sort(paths)
	part := uint64(0)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ls := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		for _, chunk := range [][]string{ls[:len(ls)/2], ls[len(ls)/2:]} {
			var in bytes.Buffer
			for i, l := range chunk {
				order := part<<40 | uint64(i)
				fmt.Fprintf(&in, "%d\t%d\t%s\n", order, order, l)
			}
			part++
			var out bytes.Buffer
			st, err := DedupMap(bg, cfg, &in, &out)
			if err != nil {
				t.Fatal(err)
			}
			res.Summary.Records += st.Records
			res.Summary.Rejected += st.Rejected
			br := bufio.NewReader(&out)
			ended := false
			for {
				kind, p, err := readFrame(br, nil)
				if err != nil {
					break
				}
				switch kind {
				case FrameDocument:
					f, err := parseDocFrame(p)
					if err != nil {
						t.Fatal(err)
					}
					frames = append(frames, f)
				case FrameEnd:
					ended = true
				}
			}
			if !ended {
				t.Fatal("no end frame")
			}
		}
	}
	last := map[string]docFrame{}
	for _, f := range frames {
		if g, ok := last[f.id]; !ok || f.order > g.order {
			last[f.id] = f
		}
	}
	res.Summary.Documents = int64(len(last))
	res.Summary.DuplicateIDs = res.Summary.Records - res.Summary.Documents
	// Each document's text keys with the number of the set's documents
	// that keyed them, and its scoped keys with the number that keyed
	// those (its source's documents that keyed the text key they scope),
	// as the job counts them.
	keyN, scopedN := map[uint64]int{}, map[uint64]int{}
	for _, f := range last {
		for _, k := range f.textKeys {
			keyN[k]++
		}
		for _, k := range f.scoped {
			scopedN[k]++
		}
	}
	// The text keys that make pairs: held by at most TextKeyMaxDocs.
	small := func(f docFrame) []uint64 {
		var out []uint64
		for _, k := range f.textKeys {
			if keyN[k] <= kvindex.TextKeyMaxDocs {
				out = append(out, k)
			}
		}
		return out
	}
	// Group by block key; a pair is emitted by its owner table.
	type gk struct {
		kind, i int
		key     uint64
	}
	groups := map[gk][]docFrame{}
	for _, f := range last {
		for ti, key := range f.keys {
			groups[gk{0, ti, key}] = append(groups[gk{0, ti, key}], f)
		}
		for bi, h := range f.bands {
			groups[gk{1, bi, h}] = append(groups[gk{1, bi, h}], f)
		}
		if cfg.Bands {
			for _, k := range small(f) {
				groups[gk{2, 0, k}] = append(groups[gk{2, 0, k}], f)
			}
		}
	}
	perms := cfg.Layout.Permuters()
	var cands [][2]docFrame
	for key, fs := range groups {
		for i := range fs {
			for j := range fs {
				a, b := fs[i], fs[j]
				if a.id >= b.id {
					continue
				}
				d := bits.OnesCount64(uint64(a.fp ^ b.fp))
				switch {
				case key.kind == 0 && d <= cfg.K && OwnerTable(perms, a.fp, b.fp) == key.i:
				case key.kind == 1 && d > cfg.K && firstSharedBand(a.bands, b.bands) == key.i:
				case key.kind == 2 && d > cfg.K && firstSharedBand(a.bands, b.bands) < 0 && smallestShared(small(a), small(b)) == key.key:
				default:
					continue
				}
				cands = append(cands, [2]docFrame{a, b})
			}
		}
	}
	res.Summary.CandidatePairs = int64(len(cands))
	side := func(f docFrame) PairSide {
		s := PairSide{ID: f.id, Cell: f.cell}
		if len(f.textKeys) > 0 {
			s.KeyDocs = map[uint64]int{}
			for _, k := range f.textKeys {
				s.KeyDocs[k] = keyN[k]
			}
		}
		if len(f.scoped) > 0 {
			s.SourceDocs = map[uint64]int{}
			for i, k := range f.textKeys {
				s.SourceDocs[k] = scopedN[f.scoped[i]]
			}
		}
		return s
	}
	var pairs [][2]string
	for half := range 2 {
		var in, out bytes.Buffer
		for i, c := range cands {
			if i%2 == half {
				writeFrame(&in, FramePair, AppendPairFrame(nil, side(c[0]), side(c[1])))
			}
		}
		if _, err := DedupJudge(bg, cfg, &in, &out); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(&out)
		for {
			kind, p, err := readFrame(br, nil)
			if err != nil {
				break
			}
			if kind == FrameConfirmed {
				var row PairRow
				if err := json.Unmarshal(p, &row); err != nil {
					t.Fatal(err)
				}
				res.Pairs = append(res.Pairs, row)
				pairs = append(pairs, [2]string{row.IDA, row.IDB})
			}
		}
	}
	res.Clusters = Components(pairs)
	res.Summary.summarize(res.Pairs, res.Clusters)
	return res
}

// smallestShared is the smallest value in both a and b, as Spark orders
// them (signed), or 0 when none is.
func smallestShared(a, b []uint64) uint64 {
	var out uint64
	found := false
	for _, x := range a {
		if slices.Contains(b, x) && (!found || int64(x) < int64(out)) {
			out, found = x, true
		}
	}
	return out
}

func firstSharedBand(a, b []uint64) int {
	for i := range min(len(a), len(b)) {
		if a[i] == b[i] {
			return i
		}
	}
	return -1
}

func TestDedupJobEqualsReference(t *testing.T) {
	dir := t.TempDir()
	paths := writeDedupCorpus(t, dir, 12, 40)
	fpr := sharedFingerprinter(t)
	newFpr := func() (*fingerprint.Fingerprinter, error) { return fpr, nil }
	for _, tc := range []struct {
		name   string
		layout fingerprint.Layout
		k      int
		bands  bool
	}{
		{"B4K3", fingerprint.DefaultLayout, 3, false},
		{"B6K3-k2", fingerprint.Layout{B: 6, K: 3}, 2, false},
		{"B4K3-bands", fingerprint.DefaultLayout, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DedupConfig{Layout: tc.layout, K: tc.k, Format: bulkload.FormatDocs, Bands: tc.bands, Policy: DefaultDedupPolicy, NewFingerprinter: newFpr}
			want, err := DedupReference(bg, cfg, paths)
			if err != nil {
				t.Fatal(err)
			}
			got := runDedupJob(t, cfg, paths)
			if d := CompareDedup(want, got, tc.k, tc.bands, 20); len(d) > 0 {
				t.Fatalf("the job differs from the reference:\n%s", strings.Join(d, "\n"))
			}
			s := want.Summary
			t.Logf("%+v", s)
			if s.Rejected != 2 || s.DuplicateIDs != 5 || s.Clusters < 5 || s.LargestCluster < 3 {
				t.Fatalf("the corpus should give rejects, repeated ids and planted clusters: %+v", s)
			}
			// The list mails: the restyled copy pairs with its original;
			// no two mails pair by their shared footer alone, though some
			// are within k of each other.
			copyFound := false
			for _, p := range want.Pairs {
				mailA, mailB := strings.HasPrefix(p.IDA, "mail-"), strings.HasPrefix(p.IDB, "mail-")
				switch {
				case p.IDA == "mail-0" && p.IDB == "mail-copy":
					copyFound = true
				case mailA && mailB:
					t.Errorf("list mails %s and %s paired (%s, distance %d): they share only the footer", p.IDA, p.IDB, p.Clause, p.Distance)
				}
			}
			if !copyFound {
				t.Error("the restyled copy of mail-0 is not paired with it")
			}
			// With bands, the quotations pair with their originals
			// (through their shared text key: a short text has no bands).
			quotes := 0
			for _, p := range want.Pairs {
				if strings.HasPrefix(p.IDB, "quote-") || strings.HasPrefix(p.IDA, "quote-") {
					quotes++
				}
			}
			if tc.bands != (quotes > 0) {
				t.Errorf("bands %v: %d quotation pairs", tc.bands, quotes)
			}
			beyond := 0
			for _, p := range want.Pairs {
				if p.Distance > tc.k {
					beyond++
				}
			}
			if tc.bands != (beyond > 0) {
				t.Fatalf("bands %v: %d confirmed pairs beyond k", tc.bands, beyond)
			}
			// Written and read back as the job's output is.
			out := filepath.Join(t.TempDir(), "out")
			if err := WriteDedupResult(out, got); err != nil {
				t.Fatal(err)
			}
			// A singleton cluster row (--all-documents) is no cluster.
			f, err := os.OpenFile(filepath.Join(out, "clusters.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(f, `{"id":"zz-alone","cluster":"zz-alone","cluster_size":1}`)
			f.Close()
			back, err := ReadDedupOutput(out)
			if err != nil {
				t.Fatal(err)
			}
			if d := CompareDedup(want, back, tc.k, tc.bands, 20); len(d) > 0 {
				t.Fatalf("read back:\n%s", strings.Join(d, "\n"))
			}
		})
	}
}

func TestDedupFingerprintLines(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	for i := range 300 {
		fp := r.Uint64()
		fmt.Fprintf(&b, "f%04d,%016x,%d\n", i, fp, 1767225600+i)
		if i%10 == 0 { // a near copy within 1..3 bits
			for j := range 1 + i%3 {
				fp ^= 1 << (7 * (j + i%9))
			}
			fmt.Fprintf(&b, "g%04d,%016x,%d\n", i, fp, 1767225600+i)
		}
	}
	b.WriteString("x,nope,1\n")
	p := filepath.Join(dir, "fps.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DedupConfig{Layout: fingerprint.DefaultLayout, K: 3, Format: bulkload.FormatFingerprints, Policy: DefaultDedupPolicy}
	want, err := DedupReference(bg, cfg, []string{p})
	if err != nil {
		t.Fatal(err)
	}
	if want.Summary.ConfirmedPairs != 30 || want.Summary.Rejected != 1 {
		t.Fatalf("%+v", want.Summary)
	}
	for _, pr := range want.Pairs {
		if pr.Clause != decide.ClauseDistance || pr.Relation != PairNearIdentical {
			t.Fatalf("bare fingerprints are judged by distance: %+v", pr)
		}
	}
	got := runDedupJob(t, cfg, []string{p})
	if d := CompareDedup(want, got, 3, false, 20); len(d) > 0 {
		t.Fatal(strings.Join(d, "\n"))
	}
}

// TestBlockKeysPigeonhole: two fingerprints within K share the block key
// of at least one table, and OwnerTable names the first.
func TestBlockKeysPigeonhole(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, l := range []fingerprint.Layout{{B: 4, K: 3}, {B: 6, K: 3}, {B: 5, K: 2}, {B: 8, K: 3}} {
		perms := l.Permuters()
		for range 2000 {
			a := fingerprint.Fingerprint(r.Uint64())
			b := a
			for range r.IntN(l.K + 1) {
				b ^= 1 << r.IntN(64)
			}
			ka, kb := BlockKeys(perms, a), BlockKeys(perms, b)
			first := -1
			for i := range ka {
				if ka[i] == kb[i] {
					first = i
					break
				}
			}
			if first < 0 || OwnerTable(perms, a, b) != first {
				t.Fatalf("%v: %016x %016x share no key (or owner %d != %d)", l, a, b, OwnerTable(perms, a, b), first)
			}
		}
	}
}

func TestJudgePairIsSymmetric(t *testing.T) {
	fpr := sharedFingerprinter(t)
	e, err := newDedupEncoder(bg, DedupConfig{Layout: fingerprint.DefaultLayout, K: 3, Format: bulkload.FormatDocs,
		NewFingerprinter: func() (*fingerprint.Fingerprinter, error) { return fpr, nil }})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("The committee met on Tuesday to review the budget for the coming year and agreed on most items. ", 3) +
		"Several members asked for more detail on transport spending before the final vote next month. " +
		"The chair said a revised draft would be circulated to all members by Friday afternoon."
	short := "The committee met on Tuesday to review the budget for the coming year and agreed on most items."
	mk := func(id, text string) DedupDoc {
		b, _ := json.Marshal(map[string]string{"id": id, "text": text, "time": "2026-01-01T00:00:00Z"})
		d, err := e.encode(b, 1)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b := mk("a", short), mk("b", long)
	rule := decide.DefaultRule()
	ab, okab := JudgePair(rule, decide.PolicyCopy, a.Doc, b.Doc, 64)
	ba, okba := JudgePair(rule, decide.PolicyCopy, b.Doc, a.Doc, 64)
	if !okab || !okba || ab.Relation != PairAIsExcerpt || ba.Relation != PairBIsExcerpt {
		t.Fatalf("excerpt: %+v %v / %+v %v", ab, okab, ba, okba)
	}
	same, ok := JudgePair(rule, decide.PolicyCopy, a.Doc, mk("c", short).Doc, 3)
	if !ok || same.Relation != PairNearIdentical || same.Clause != decide.ClauseExact {
		t.Fatalf("exact copy: %+v %v", same, ok)
	}
}

func TestComponentsStream(t *testing.T) {
	in := "b\tc\nd\te\nc\ta\nx\ty\ne\tb\n"
	var out bytes.Buffer
	ids, clusters, err := ComponentsStream(strings.NewReader(in), &out)
	if err != nil || ids != 7 || clusters != 2 {
		t.Fatal(ids, clusters, err)
	}
	want := "a\ta\nb\ta\nc\ta\nd\ta\ne\ta\nx\tx\ny\tx\n"
	if out.String() != want {
		t.Fatalf("got\n%s", out.String())
	}
}

// writeSourceCorpus writes, in two files, the texts of internal/server
// TestSourceTemplatePairSameAnswerOnEveryRoute as a document set: the five
// pages of a site (a header and internal/testmails' signature and footer
// around a one-sentence body; the five bodies nearest the new page's),
// a new page of the site, and another site's roundup that quotes the new
// page's body among sentences of its own. It returns the files, the ids of
// the site's pages (the new one last) and the id of the page nearest the
// new one.
func writeSourceCorpus(t *testing.T, dir string) (paths, site []string, nearest string) {
	t.Helper()
	mails := testmails.Load()
	const header = "Builders mailing list message from the release engineering team."
	page := func(body string) string { return header + "\n" + mails.Mail(body) }
	fpr := sharedFingerprinter(t)
	simhash := func(text string) fingerprint.Fingerprint {
		r, err := fpr.Fingerprint(fingerprint.Document{Body: text})
		if err != nil {
			t.Fatal(err)
		}
		return r.Simhash
	}
	fNew := simhash(page(mails.New))
	dist := func(b string) int { return fingerprint.Distance(fNew, simhash(page(b))) }
	bodies := slices.Clone(mails.Bodies)
	slices.SortStableFunc(bodies, func(a, b string) int { return dist(a) - dist(b) })
	bodies = bodies[:5]
	if d := dist(bodies[0]); d > 3 {
		t.Fatalf("test texts: the nearest page is %d bits from the new one; the dedup pairs documents within 3", d)
	}
	line := func(id, text, source string) string {
		b, _ := json.Marshal(map[string]any{"id": id, "text": text, "time": "2026-03-01T00:00:00Z", "attrs": map[string]string{"source": source}})
		return string(b)
	}
	const siteName = "builders.example.org"
	var files [2][]string
	for i, b := range bodies {
		id := fmt.Sprintf("page-%d", i)
		site = append(site, id)
		files[i%2] = append(files[i%2], line(id, page(b), siteName))
	}
	site = append(site, "page-new")
	files[1] = append(files[1], line("page-new", page(mails.New), siteName))
	roundup := "The weekly roundup of the regional software cooperatives collects what their lists discussed.\n" +
		"Two projects announced new maintainers and one retired its old mirror network.\n" +
		"On the builders list one message stood out among the many about failing machines.\n" +
		mails.New + "\n" +
		"The translation teams asked for more reviewers before the spring release.\n" +
		"Next week the roundup covers the documentation sprint and the accessibility audit.\n"
	files[0] = append(files[0], line("roundup", roundup, "roundup.example.net"))
	for i, ls := range files {
		p := filepath.Join(dir, fmt.Sprintf("site-%d.jsonl", i))
		if err := os.WriteFile(p, []byte(strings.Join(ls, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths, site, "page-0"
}

// TestDedupSourceTemplate: a site's footer that six of its pages carry is
// the site's template, though not the set's. Over the set, the new page's
// rarest sentence (its body) is in two documents (itself and the roundup
// that quotes it), so a sentence is template overall only from
// 3 x (2+1) = 9 documents, and the footer (six) is not; among the site's
// pages its body is in one, so six suffice. With the source attribute the
// new page and its nearest page, which share nothing but the site's header
// and footer, are no pair in the job, in the reference and in a load's
// dedup report over an index loaded with the same attribute
// (detect.Judge.StoredSides); without it they are a pair in all three.
func TestDedupSourceTemplate(t *testing.T) {
	dir := t.TempDir()
	paths, site, nearest := writeSourceCorpus(t, dir)
	fpr := sharedFingerprinter(t)
	newFpr := func() (*fingerprint.Fingerprinter, error) { return fpr, nil }
	for _, tc := range []struct {
		name   string
		attr   string // DedupConfig.SourceAttr and IndexConfig.SourceAttr
		stored string // the source attribute the loaded index records
		bands  bool
		paired bool // the new page and its nearest page
	}{
		{"source", "", kvindex.DefaultSourceAttr, false, false},
		{"source-bands", kvindex.DefaultSourceAttr, kvindex.DefaultSourceAttr, true, false},
		{"no-source", kvindex.NoSourceAttr, "", false, true},
		{"other-attr", "site", "site", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const k = 3
			cfg := DedupConfig{Layout: fingerprint.DefaultLayout, K: k, Format: bulkload.FormatDocs, Bands: tc.bands, Policy: DefaultDedupPolicy,
				NewFingerprinter: newFpr, SourceAttr: tc.attr}
			want, err := DedupReference(bg, cfg, paths)
			if err != nil {
				t.Fatal(err)
			}
			got := runDedupJob(t, cfg, paths)
			if d := CompareDedup(want, got, k, tc.bands, 20); len(d) > 0 {
				t.Fatalf("the job differs from the reference:\n%s", strings.Join(d, "\n"))
			}
			paired := map[[2]string]bool{}
			for _, p := range want.Pairs {
				paired[[2]string{p.IDA, p.IDB}] = true
				if slices.Contains(site, p.IDA) && slices.Contains(site, p.IDB) && !tc.paired {
					t.Errorf("pages %s and %s paired (%s, distance %d): they share only the site's template", p.IDA, p.IDB, p.Clause, p.Distance)
				}
			}
			if key := [2]string{nearest, "page-new"}; paired[key] != tc.paired {
				t.Errorf("the new page and its nearest page %s: paired %v, want %v", nearest, paired[key], tc.paired)
			}

			// A load of the same set with the same attribute, its pairs
			// within k judged as a load's dedup report judges them.
			ix, err := openIndex(bg, Store{DataDir: t.TempDir()}, IndexConfig{SourceAttr: tc.attr})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			if ix.SourceAttr() != tc.stored {
				t.Fatalf("the loaded index's source attribute is %q, want %q", ix.SourceAttr(), tc.stored)
			}
			if _, err := bulkload.Run(bg, ix, bulkload.Config{Inputs: paths, CheckpointDir: t.TempDir(), Memory: bulkload.MinMemory, NewFingerprinter: newFpr}); err != nil {
				t.Fatal(err)
			}
			ids := append(slices.Clone(site), "roundup")
			docs, err := ix.Documents(bg, ids)
			if err != nil || len(docs) != len(ids) {
				t.Fatalf("%d of %d documents read: %v", len(docs), len(ids), err)
			}
			list := make([]kvindex.Document, 0, len(ids))
			for _, id := range ids {
				list = append(list, docs[id])
			}
			j := detect.Judge{Rule: decide.DefaultRule(), Policy: DefaultDedupPolicy, Sketcher: fpr}
			sides, err := j.StoredSides(bg, ix, list)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(ids)
			for x, a := range ids {
				for _, b := range ids[x+1:] {
					da, db := docs[a], docs[b]
					if fingerprint.Distance(da.Fingerprint, db.Fingerprint) > k {
						continue
					}
					_, ok := JudgeSides(j.Rule, DefaultDedupPolicy, da, db, sides[a], sides[b], k)
					if dedup := paired[[2]string{a, b}]; ok != dedup {
						t.Errorf("%s and %s: paired %v by the load's dedup report, %v by the dedup", a, b, ok, dedup)
					}
				}
			}
		})
	}
}
