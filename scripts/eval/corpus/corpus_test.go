package corpus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExtractHelpPage(t *testing.T) {
	f, err := os.Open("testdata/help_page.html")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	title, body, err := ExtractHelpPage(f)
	if err != nil {
		t.Fatal(err)
	}
	if title != "插入幻灯片" {
		t.Errorf("title %q", title)
	}
	want := strings.Join([]string{
		"在当前选中的幻灯片之后插入一张新幻灯片。",
		"要访问此命令...",
		"选择「工具 - 选项」。", // the default variant, not the macOS one
		"第一项",
		"第二项 强调 文字",
	}, "\n")
	if body != want {
		t.Errorf("body:\n%s\nwant:\n%s", body, want)
	}
	for _, bad := range []string{"偏好设置", "脚本", "LibreOffice 7.4 帮助", "索引", "搜索框", "捐赠", "This page is", "模块"} {
		if strings.Contains(body, bad) {
			t.Errorf("body contains page furniture %q", bad)
		}
	}
}

func TestDetag(t *testing.T) {
	tests := []struct{ in, want string }{
		{"The/at jury/nn said/vbd ./.", "The jury said."},
		{"``/`` no/at evidence/nn ''/'' that/cs", `"no evidence" that`},
		{"Atlanta's/np$ recent/jj election/nn ,/, however/rb", "Atlanta's recent election, however"},
		{"(/( see/vb below/rb )/)", "(see below)"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Detag(tt.in); got != tt.want {
			t.Errorf("Detag(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCut(t *testing.T) {
	var paras [][]string
	for p := range 30 {
		var ss []string
		for s := range 1 + p%5 {
			ss = append(ss, fmt.Sprintf("Sentence %d of paragraph %d has a few more words in it.", s, p))
		}
		paras = append(paras, ss)
	}
	pieces := Cut("key", "en", paras)
	if len(pieces) < 3 {
		t.Fatalf("%d pieces from 90 sentences", len(pieces))
	}
	// Every sentence lands in exactly one piece, in order.
	var all []string
	for _, p := range pieces {
		all = append(all, p)
	}
	joined := strings.Join(all, " ")
	last := -1
	for p, ss := range paras {
		for _, s := range ss {
			i := strings.Index(joined, s)
			if i < 0 || i < last || strings.Count(joined, s) != 1 {
				t.Fatalf("sentence %q of paragraph %d missing, repeated or out of order", s, p)
			}
			last = i
		}
	}
	// A piece only exceeds its target by ending in a single long sentence,
	// so no piece is longer than the largest target plus a sentence.
	for _, p := range pieces {
		if n := utf8.RuneCountInString(p); n > 3000+100 {
			t.Errorf("piece of %d chars", n)
		}
	}
	if again := Cut("key", "en", paras); strings.Join(again, "|") != strings.Join(pieces, "|") {
		t.Error("Cut is not deterministic")
	}
}

func TestBucketOf(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{{0, Short}, {199, Short}, {200, Medium}, {500, Medium}, {501, Long}} {
		if got := BucketOf(tt.n); got != tt.want {
			t.Errorf("BucketOf(%d) = %s, want %s", tt.n, got, tt.want)
		}
	}
}

// writeSources lays out tiny copies of the three installed sources.
func writeSources(t *testing.T) Sources {
	t.Helper()
	dir := t.TempDir()
	help := filepath.Join(dir, "help", "text", "simpress", "01")
	brown := filepath.Join(dir, "brown")
	sotu := filepath.Join(dir, "sotu")
	for _, d := range []string{help, brown, sotu} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	page, err := os.ReadFile("testdata/help_page.html")
	if err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(help, "insert.html"), string(page))
	write(filepath.Join(help, "copy.html"), string(page)) // an exact duplicate page
	write(filepath.Join(help, "tiny.html"), "<html><head><title>T</title></head><body><div id=\"DisplayArea\"><p>短</p></div></body></html>")
	var tagged strings.Builder
	for p := range 12 {
		tagged.WriteString("\n\n\t")
		for s := range 4 {
			fmt.Fprintf(&tagged, "The/at council/nn met/vbd on/in day/nn %d/cd to/to discuss/vb item/nn %d/cd ./. ", p, s)
		}
	}
	write(filepath.Join(brown, "ca01"), tagged.String())
	write(filepath.Join(brown, "cats.txt"), "ca01 news\n")
	var speech strings.Builder
	for s := range 300 {
		fmt.Fprintf(&speech, "We the people resolve matter number %d today. ", s)
	}
	write(filepath.Join(sotu, "1990_test_person_n.json"), fmt.Sprintf(`{"year":1990,"name":"Test Person","party":"n","text":%q}`, speech.String()))
	return Sources{HelpDir: filepath.Join(dir, "help"), BrownDir: brown, SOTUDir: sotu}
}

func TestBuild(t *testing.T) {
	docs, st, err := Build(context.Background(), writeSources(t))
	if err != nil {
		t.Fatal(err)
	}
	if st.Duplicates != 1 || st.TooShort != 1 || st.Kept != len(docs) || st.Read != st.Kept+st.Duplicates+st.TooShort {
		t.Errorf("stats %+v for %d docs", st, len(docs))
	}
	bySource := map[string]int{}
	for i, d := range docs {
		if err := d.Validate(); err != nil {
			t.Error(err)
		}
		if i > 0 && docs[i-1].ID >= d.ID {
			t.Errorf("not sorted by id: %s, %s", docs[i-1].ID, d.ID)
		}
		bySource[d.Source]++
		if strings.Contains(d.Body, "/nn") || strings.Contains(d.Body, "/at") {
			t.Errorf("%s: tags left in %q", d.ID, d.Body)
		}
	}
	if bySource["lohelp"] != 1 || bySource["brown"] < 2 || bySource["sotu"] < 2 {
		t.Errorf("documents by source %v", bySource)
	}
	var help Doc
	for _, d := range docs {
		if d.Source == "lohelp" {
			help = d
		}
	}
	if help.Lang != "zh" || help.Topic != "simpress" || help.Title != "插入幻灯片" {
		t.Errorf("help doc %+v", help)
	}
}

func TestBuildMissingSource(t *testing.T) {
	src := writeSources(t)
	src.SOTUDir = filepath.Join(t.TempDir(), "nothing")
	if _, _, err := Build(context.Background(), src); err == nil {
		t.Error("Build with a missing source: no error")
	}
	src.SOTUDir = ""
	if _, _, err := Build(context.Background(), src); err != nil {
		t.Errorf("Build with a skipped source: %v", err)
	}
}

func TestReadWrite(t *testing.T) {
	docs := []Doc{
		{ID: "a", Source: "s", Lang: "en", Topic: "t", Title: "T <b>&", Body: "Body one."},
		{ID: "b", Source: "s", Lang: "zh", Body: "正文。\n第二行"},
	}
	var buf bytes.Buffer
	if err := Write(&buf, docs); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != docs[0] || got[1] != docs[1] {
		t.Errorf("round trip: %+v", got)
	}
}

func TestReadBad(t *testing.T) {
	tests := []struct{ name, in string }{
		{"not json", "{"},
		{"no id", `{"lang":"en","body":"x"}`},
		{"bad lang", `{"id":"a","lang":"fr","body":"x"}`},
		{"empty body", `{"id":"a","lang":"en","body":"  "}`},
		{"duplicate id", `{"id":"a","lang":"en","body":"x"}` + "\n" + `{"id":"a","lang":"en","body":"y"}`},
		{"wrong type", `{"id":1,"lang":"en","body":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.in))
			if !errors.Is(err, ErrBadDoc) {
				t.Errorf("Read(%q) = %v, want ErrBadDoc", tt.in, err)
			}
		})
	}
}

func FuzzRead(f *testing.F) {
	f.Add(`{"id":"a","source":"s","lang":"en","body":"x"}`)
	f.Add(`{"id":"a","lang":"zh","body":"正文"}` + "\n\n" + `{"id":"b","lang":"en","body":"y"}`)
	f.Add("{")
	f.Add(`{"id":"a","lang":"en","body":"\xff"}`)
	f.Fuzz(func(t *testing.T, in string) {
		docs, err := Read(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrBadDoc) {
				t.Fatalf("error not ErrBadDoc: %v", err)
			}
			return
		}
		for _, d := range docs {
			if err := d.Validate(); err != nil {
				t.Fatalf("Read returned an invalid doc: %v", err)
			}
		}
	})
}
