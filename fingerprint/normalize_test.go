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
		{"page furniture skipped", "<header>Daily News</header><article><p>Story.</p></article><aside><a>Other story</a></aside><footer>About | Jobs</footer>", "story."},
		{"nav bar line", "Home | World | Sports | Weather\nThe story.", "the story."},
		{"breadcrumb line", "News > World > Asia\nThe story.", "the story."},
		{"zh nav line", "首页 国内 财经 体育\n正文内容。", "正文内容。"},
		{"sentence with bars kept", "Use a | b | c to pipe the output of one program into the next.", "use a | b | c to pipe the output of one program into the next."},
		{"related block", "First paragraph.\nRelated articles:\nSome other story\nAnother headline\nSecond paragraph.", "first paragraph.\nsecond paragraph."},
		{"zh related block", "第一段。\n相关阅读：\n别的新闻\n第二段。", "第一段。\n第二段。"},
		{"read more keeps teaser", "The first half of the story … Read more", "the first half of the story"},
		{"zh read more keeps teaser", "文章的前半部分……阅读全文", "文章的前半部分"},
		{"dateline", "Updated 2025-10-22 22:09 · 94443 views\nThe story.", "the story."},
		{"zh dateline", "2020年9月1日 05:28 阅读 15029\n正文内容。", "正文内容。"},
		{"sentence with numbers kept", "In 1999 there were 250 of them", "in 1999 there were 250 of them"},
		{"masthead echoed in copyright", "Daily Tribune\nThe story.\nCopyright 2020 Daily Tribune", "the story."},
		{"zh masthead echoed", "环球视点\n正文内容。\n版权所有 © 2017 环球视点", "正文内容。"},
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

func TestDropHeadline(t *testing.T) {
	tests := []struct{ name, body, title, want string }{
		{"h1 repeated", "big news\nthe story.", "big news", "the story."},
		{"with site name", "big news - daily tribune\nthe story.", "big news", "the story."},
		{"mentioned in a sentence", "the story. big news is what everyone in the town and beyond talked about for a week.", "big news", "the story. big news is what everyone in the town and beyond talked about for a week."},
		{"body is the headline", "big news", "big news", "big news"},
		{"no title", "big news\nthe story.", "", "big news\nthe story."},
		{"chinese headline with site", "删除 - 环球视点\n从表格中删除选中的列。", "删除", "从表格中删除选中的列。"},
		{"title word inside a short sentence", "从表格中删除选中的列。\n选择「表格 - 删除 - 列」。\n删除栏", "删除", "从表格中删除选中的列。\n选择「表格 - 删除 - 列」。\n删除栏"},
		{"title inside a longer word", "newsroom notes\nthe story.", "news", "newsroom notes\nthe story."},
		{"short sentence with the title", "big news. it rained.\nthe story.", "big news", "big news. it rained.\nthe story."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := dropHeadline(tc.body, tc.title); got != tc.want {
				t.Errorf("dropHeadline(%q, %q) = %q, want %q", tc.body, tc.title, got, tc.want)
			}
		})
	}
}

func TestDropQuoted(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"reply", "thanks, that works.\non monday jane wrote:\n> the old text.\n> more of it.\n--\njoe", "thanks, that works.\non monday jane wrote:\n--\njoe"},
		{"first line quoted", "> the old text.\nmy answer.", "my answer."},
		{"all quoted", "> the old text.\n> more of it.", "> the old text.\n> more of it."},
		{"no quotes", "a > b\nc", "a > b\nc"},
	} {
		if got := dropQuoted(tc.in); got != tc.want {
			t.Errorf("%s: dropQuoted(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
	// Through Normalize: a reply and the mail it quotes share nothing but
	// the quoted lines, which the reply's text leaves out.
	if got := normalize("Thanks.\n> The budget passed.\n"); got != "thanks." {
		t.Errorf("normalize(reply) = %q", got)
	}
}

func TestTrimEdgeLines(t *testing.T) {
	prose := "the council approved the budget for the new library after a long debate."
	for _, tc := range []struct{ name, in, want string }{
		{"masthead and footer", "daily tribune\n" + prose + "\nweather sports\ncontact us", prose},
		{"Chinese masthead", "南方日报\n市议会在长时间辩论后批准了新图书馆的预算。", "市议会在长时间辩论后批准了新图书馆的预算。"},
		{"punctuated short lines stay", "editor's note: short.\n" + prose + "\nthe end.", "editor's note: short.\n" + prose + "\nthe end."},
		{"inner short lines stay", prose + "\nsection two\n" + prose, prose + "\nsection two\n" + prose},
		{"one line", "daily tribune", "daily tribune"},
		{"only short lines", "weather\nsports\nopinion", "weather\nsports\nopinion"},
		{"Chinese clause comma is text", "前一张幻灯片,无效果\n" + prose, "前一张幻灯片,无效果\n" + prose},
		{"Latin comma is a dateline", "reuters, london\n" + prose, prose},
		{"mail above a signature", "show track changes\n--\njane roe\n" + prose + "\nlist footer", "show track changes\n--\njane roe\n" + prose},
	} {
		if got := trimEdgeLines(tc.in); got != tc.want {
			t.Errorf("%s: trimEdgeLines(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}
