package fingerprint

import (
	"testing"
	"unicode"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "Hello World", "hello world"},
		{"fullwidth", "ＡＢＣ１２３，中文　测试", "abc123,中文 测试"},
		{"whitespace", "  a \t b  \n\n\n c  ", "a b\nc"},
		{"crlf", "line one\r\nline two", "line one\nline two"},
		{"tags", "<p>first</p><p>second <b>bold</b>er</p>", "first\nsecond bolder"},
		{"inline han", "新<b>闻</b>报道", "新闻报道"},
		{"script style", "<script>alert('<p>x</p>')</script>text<style>.a{}</style>", "text"},
		{"unclosed script", "text<script>var a = 1;", "text"},
		{"comment", "a<!-- hidden -->b", "a b"},
		{"entities", "Tom &amp; Jerry &lt;3 &#20013;&#25991;", "tom & jerry <3 中文"},
		{"not a tag", "a < b and c > d", "a < b and c > d"},
		{"unterminated tag", "a <b", "a <b"},
		{"copyright line", "Real text here.\nCopyright 2024 Example News. All rights reserved.", "real text here."},
		{"zh boilerplate", "正文内容。\n责任编辑：张三\n上一篇：某某新闻", "正文内容。"},
		{"share alone", "body\nShare\nTweet", "body"},
		{"long line keeps marker", "This long sentence mentions copyright law in the middle of a real paragraph that goes on and on for quite a while.", "this long sentence mentions copyright law in the middle of a real paragraph that goes on and on for quite a while."},
		{"apostrophe", "Don’t stop", "don't stop"},
		{"nav skipped", "<nav><a>Home</a><a>World</a></nav><article>Story</article>", "story"},
		{"invalid utf8", "a\xffb", "a\ufffdb"},
		{"empty", "", ""},
	}
	f := &Fingerprinter{} // Normalize needs no dictionaries
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := f.Normalize(tc.in); got != tc.want {
				t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	bad := []func(*Config){
		func(c *Config) { c.MinFeatures = 0 },
		func(c *Config) { c.TitleBoost = 0.5 },
		func(c *Config) { c.LeadBoost = -1 },
		func(c *Config) { c.LeadChars = -1 },
		func(c *Config) { c.BigramWeight = -0.1 },
		func(c *Config) { c.TopFeatures = -1 },
		func(c *Config) { c.MaxBytes = 0 },
		func(c *Config) { c.TitleBoost = nan() },
	}
	for i, mod := range bad {
		c := DefaultConfig()
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("case %d: Validate accepted %+v", i, c)
		}
		if _, err := New(c); err == nil {
			t.Errorf("case %d: New accepted %+v", i, c)
		}
	}
}

func nan() float64 { z := 0.0; return z / z }

// The fast paths for CJK runes must agree with the unicode package.
func TestCJKFastPaths(t *testing.T) {
	for r := rune(0x2E00); r <= 0xA000; r++ {
		if got, want := isHan(r), unicode.Is(unicode.Han, r); got != want {
			t.Fatalf("isHan(%U) = %v, want %v", r, got, want)
		}
		if r >= 0x3000 && r <= 0x9FFF && r != 0x3000 && (unicode.ToLower(r) != r || unicode.IsSpace(r)) {
			t.Fatalf("%U has a lower case or is a space: the fast path in cleanLines is wrong", r)
		}
	}
}
