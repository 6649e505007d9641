package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	in := "# comment\n開\t开 𫔭\n中\t中\n苧\t苎\n薴\t苧\n國\t国\n\n"
	got, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[rune]rune{'開': '开', '苧': '苎', '薴': '苎', '國': '国'} // identity dropped, first candidate, chain resolved
	if len(got) != len(want) {
		t.Fatalf("parse: %d pairs %q, want %d", len(got), got, len(want))
	}
	for i, p := range got {
		if want[p.trad] != p.simp {
			t.Errorf("%c -> %c, want %c", p.trad, p.simp, want[p.trad])
		}
		if i > 0 && got[i-1].trad >= p.trad {
			t.Error("not sorted by the traditional character")
		}
	}
	if _, err := parse(strings.NewReader("開 开\n")); err == nil {
		t.Error("a line without a tab was accepted")
	}
	src, err := render(got, "TSCharacters.ocd2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "t.go", src, 0); err != nil || !strings.Contains(string(src), "DO NOT EDIT") {
		t.Fatalf("rendered source: %v\n%s", err, src)
	}
}
