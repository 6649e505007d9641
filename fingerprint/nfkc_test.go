package fingerprint

import (
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// TestNFKCStringEveryRune checks the fast path against norm for every BMP
// rune alone and between neighbours it could combine with: a Latin letter
// and a combining accent, Hangul jamo, full-width forms and kana voicing
// marks.
func TestNFKCStringEveryRune(t *testing.T) {
	contexts := []struct{ left, right string }{
		{"", ""},
		{"a", "\u0301"},
		{"\u1100", "\u1161\u11a8"},
		{"\uac00", "\u11a8"},
		{"ｅ，", "\u3099中"},
		{"中文", "\u0327\u0301x"},
	}
	tab := nfkcTables()
	for c := range rune(utf8.RuneSelf) {
		if tab.class[c] != nfkcSame {
			t.Fatalf("ASCII %q is not unchanged in the table: the 8-byte skip is wrong", c)
		}
	}
	bad := 0
	for r := rune(0); r < 1<<16; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		for _, c := range contexts {
			s := c.left + string(r) + string(r) + c.right
			if got, want := nfkcString(s), norm.NFKC.String(s); got != want {
				if bad++; bad <= 10 {
					t.Errorf("nfkcString(%+q) = %+q, norm gives %+q", s, got, want)
				}
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d mismatches in all", bad)
	}
}

func TestNFKCStringTexts(t *testing.T) {
	texts := []string{
		"",
		"plain ascii, nothing to do.",
		"北京时间11月23日，国务院新闻办公室举行发布会：“全年经济运行总体平稳”。",
		"ＦＵＬＬ　ｗｉｄｔｈ！１２３",
		"café naïve résumé",      // precomposed: unchanged
		"cafe\u0301 nai\u0308ve", // decomposed: composed by NFKC
		"한국어 \u1112\u1161\u11ab", // Hangul syllables and jamo
		"𝐁𝐨𝐥𝐝 math letters 😀",    // outside the BMP
		"ﬁ ligature, ½, ①, ㈱, ㌔",
		"bad \xff utf-8 \xe4\xb8",
		"trailing accent\u0301",
		"…—–‘’“”·•",
	}
	for _, s := range texts {
		if got, want := nfkcString(s), norm.NFKC.String(s); got != want {
			t.Errorf("nfkcString(%+q) = %+q, norm gives %+q", s, got, want)
		}
	}
	for _, bc := range benchCases {
		s := benchBody(t, bc.lang, bc.size)
		if got, want := nfkcString(s), norm.NFKC.String(s); got != want {
			t.Errorf("%s: nfkcString differs from norm", bc.name)
		}
	}
}

// TestNFKCStringNoCopy: text already in NFKC comes back as is, as from norm.
func TestNFKCStringNoCopy(t *testing.T) {
	s := "已经是规范形式的中文。plain text"
	if n := testing.AllocsPerRun(100, func() { _ = nfkcString(s) }); n != 0 {
		t.Errorf("%v allocations for NFKC text, want 0", n)
	}
}

func FuzzNFKCString(f *testing.F) {
	for _, s := range []string{"", "a\u0301", "中，文", "ＡＢ\u0301", "\u1100\u1161\u11a8", "\xff", "½\u0301", "😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := nfkcString(s), norm.NFKC.String(s)
		if got != want {
			t.Fatalf("nfkcString(%+q) = %+q, norm gives %+q", s, got, want)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 out of valid input %+q", s)
		}
	})
}

// BenchmarkNFKC compares the fast path with norm on the benchmark texts.
func BenchmarkNFKC(b *testing.B) {
	for _, bc := range benchCases {
		body := benchBody(b, bc.lang, bc.size)
		b.Run(bc.name+"/norm", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				_ = norm.NFKC.String(body)
			}
		})
		b.Run(bc.name+"/fast", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				_ = nfkcString(body)
			}
		})
	}
}
