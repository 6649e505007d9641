package fingerprint

import (
	"testing"
	"unicode"
)

// The generated table is sane: every key is a Han character mapped to a
// different Han character, folding is idempotent (no chains), and common
// characters fold as a reader expects.
func TestTradSimpTable(t *testing.T) {
	if n := len(tradSimp); n < 2500 {
		t.Fatalf("table has %d pairs, want thousands (regenerate with go generate)", n)
	}
	for tr, s := range tradSimp {
		switch {
		case tr == s:
			t.Errorf("identity pair %c", tr)
		case !unicode.Is(unicode.Han, tr) || !unicode.Is(unicode.Han, s):
			t.Errorf("non-Han pair %U -> %U", tr, s)
		case foldTrad(s) != s:
			t.Errorf("not idempotent: %c -> %c -> %c", tr, s, foldTrad(s))
		}
	}
	for _, tc := range []struct{ trad, simp string }{
		{"開", "开"}, {"國", "国"}, {"後", "后"}, {"線", "线"}, {"買", "买"}, {"於", "于"},
		{"這", "这"}, {"電", "电"}, {"學", "学"}, {"發", "发"}, {"髮", "发"}, {"麼", "么"},
		{"开", "开"}, {"中", "中"}, {"a", "a"},
	} {
		if got := string(foldTrad([]rune(tc.trad)[0])); got != tc.simp {
			t.Errorf("foldTrad(%s) = %s, want %s", tc.trad, got, tc.simp)
		}
	}
}

// A traditional copy normalizes to its simplified original.
func TestNormalizeFoldsTraditional(t *testing.T) {
	for _, tc := range []struct{ trad, simp string }{
		{"這個軟體會開啟對話方塊，顯示所有選項。", "这个软体会开启对话方块,显示所有选项。"},
		{"臺灣的電腦與網路", "台湾的电脑与网路"},
	} {
		if got, want := normalize(tc.trad), normalize(tc.simp); got != want {
			t.Errorf("normalize(%q) = %q, want %q (the simplified text's form)", tc.trad, got, want)
		}
	}
}
