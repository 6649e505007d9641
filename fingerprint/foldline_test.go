package fingerprint

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// foldLineRef is foldLine written rune by rune, the way cleanLines did it
// before the ASCII runs: the oracle for the fast path.
func foldLineRef(s string) (string, int) {
	var b strings.Builder
	space := false
	for i, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\f' || r == '\v' || r == '\u2028' || r == '\u2029':
			return b.String(), i + utf8.RuneLen(r)
		case r == ' ' || r == '\t' || unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case r == '\u2019' || r == '\u2018':
			r = '\''
		case r >= 0x3000 && r <= 0x9FFF:
			r = foldTrad(r)
		default:
			r = foldTrad(unicode.ToLower(r))
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String(), len(s) + 1
}

var foldLineCases = []string{
	"",
	"Hello,  World\tAGAIN \n next",
	"  leading and trailing  ",
	"Don’t ‘quote’ me",
	"這個軟體會開啟對話方塊，顯示所有選項。",
	"MiXeD 中文 ABC\u2028second line",
	"\x00\x01 control\x7f bytes\rCR",
	"Ärger ÖL straße Σίσυφος",
	"\u00a0nbsp\u00a0inside\u3000ideographic",
	"\f\v",
}

func TestFoldLineMatchesRuneByRune(t *testing.T) {
	for _, s := range foldLineCases {
		checkFoldLine(t, s)
	}
}

func FuzzFoldLine(f *testing.F) {
	for _, s := range foldLineCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // normalize makes its input valid first
		}
		checkFoldLine(t, s)
	})
}

func checkFoldLine(t *testing.T, s string) {
	t.Helper()
	got, n := foldLine(nil, s)
	want, wn := foldLineRef(s)
	if string(got) != want || n != wn {
		t.Fatalf("foldLine(%+q) = %+q, %d; rune by rune %+q, %d", s, got, n, want, wn)
	}
}
