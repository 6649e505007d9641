package textutil

import (
	"math"
	"slices"
	"testing"
)

func TestSentences(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"english", "The jury said. It was fine! Was it? Yes.", []string{"The jury said.", "It was fine!", "Was it?", "Yes."}},
		{"abbreviations", "Mr. Smith met Dr. Jones in the U.S. Army. Then he left.", []string{"Mr. Smith met Dr. Jones in the U.S. Army.", "Then he left."}},
		{"lower case after period", "See p. 12 and e.g. this. Done.", []string{"See p. 12 and e.g. this.", "Done."}},
		{"quotes", `He said "go." She went.`, []string{`He said "go."`, "She went."}},
		{"chinese", "点击按钮。然后选择文件！完成了吗？是的", []string{"点击按钮。", "然后选择文件！", "完成了吗？", "是的"}},
		{"chinese closing bracket", "选择「文件」。」下一步。", []string{"选择「文件」。」", "下一步。"}},
		{"empty", "   ", nil},
		{"no terminator", "just words", []string{"just words"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sentences(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Sentences(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestJoinRoundTrip(t *testing.T) {
	for _, tt := range []struct{ lang, in string }{
		{"en", "One. Two three. Four?"},
		{"zh", "一。二三。四？"},
	} {
		if got := Join(tt.lang, Sentences(tt.in)); got != tt.in {
			t.Errorf("Join(Sentences(%q)) = %q", tt.in, got)
		}
	}
}

func TestParagraphs(t *testing.T) {
	if got := Paragraphs("a\nb\n\n c \n\n\n"); !slices.Equal(got, []string{"a\nb", "c"}) {
		t.Errorf("blank-line split: %q", got)
	}
	if got := Paragraphs("a\n b\n"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("line split: %q", got)
	}
}

func TestOverlap(t *testing.T) {
	tests := []struct {
		name     string
		a, b     string
		min, max float64
	}{
		{"identical", "The quick brown fox jumps.", "The quick brown fox jumps.", 1, 1},
		{"case and punctuation ignored", "The quick, brown fox!", "the quick brown fox", 1, 1},
		{"disjoint", "aaaaaaa", "bbbbbbb", 0, 0},
		{"one word changed", "the quick brown fox jumps over the lazy dog", "the quick brown cat jumps over the lazy dog", 0.5, 0.9},
		{"chinese", "在当前选中幻灯片之后插入幻灯片", "在当前选中幻灯片之后插入幻灯片", 1, 1},
		{"both empty", "", "", 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Overlap(tt.a, tt.b)
			if got < tt.min || got > tt.max || math.IsNaN(got) {
				t.Errorf("Overlap = %v, want in [%v, %v]", got, tt.min, tt.max)
			}
			// Agrees with the exact (unhashed) computation.
			if exact := Jaccard(Shingles(tt.a, 5), Shingles(tt.b, 5)); math.Abs(exact-got) > 1e-9 {
				t.Errorf("hashed %v != exact %v", got, exact)
			}
		})
	}
}

func TestHanShare(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
	}{{"中文", 1}, {"abc", 0}, {"中a", 0.5}, {"123 !", 0}} {
		if got := HanShare(tt.in); got != tt.want {
			t.Errorf("HanShare(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
