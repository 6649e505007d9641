package fingerprint

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBadInput(t *testing.T) {
	f := testFP(t)
	tests := []struct {
		name    string
		doc     Document
		wantErr []error // every one must match; nil: success
		low     bool    // success as a low-information document
	}{
		{"empty", Document{}, []error{ErrEmpty, ErrLowInformation}, false},
		{"whitespace", Document{Body: " \t\n\r\u3000\u00a0 "}, []error{ErrEmpty, ErrLowInformation}, false},
		{"title only", Document{Title: "国家统计局发布数据"}, []error{ErrEmpty}, false},
		{"markup only", Document{Body: "<html><head><title>x</title><script>var a='text';</script></head><body><div><br/></div></body></html>"}, []error{ErrEmpty}, false},
		{"boilerplate only", Document{Body: "Copyright 2024\nShare\n版权所有"}, []error{ErrEmpty}, false},
		{"emoji only", Document{Body: strings.Repeat("😀🎉👍🏽 ", 500)}, nil, true},
		{"punctuation and numbers", Document{Body: "123, 456. 7.89%! ，。？“”"}, []error{ErrEmpty}, false},
		{"stop words only", Document{Body: "the and of to it is was 的 了 是 我们"}, nil, true},
		{"two words", Document{Body: "inflation inflation interest"}, nil, true},
		{"invalid utf8 body", Document{Body: "valid words here \xff\xfe more words"}, []error{ErrInvalidUTF8}, false},
		{"invalid utf8 title", Document{Title: "\xc3\x28", Body: "central bank raised interest rates"}, []error{ErrInvalidUTF8}, false},
		{"bad lang", Document{Body: "central bank raised interest rates", Lang: "fr"}, []error{ErrBadLang}, false},
		{"10MB of one Latin char", Document{Body: strings.Repeat("a", 10<<20)}, nil, true},
		{"10MB of one Han char", Document{Body: strings.Repeat("中", 10<<20/3)}, nil, true},
		{"10MB of spaces", Document{Body: strings.Repeat(" ", 10<<20)}, []error{ErrEmpty}, false},
		{"too large", Document{Body: strings.Repeat("word ", 4<<20)}, []error{ErrTooLarge}, false},
		{"lang hints", Document{Body: "central bank raised interest rates", Lang: "zh"}, nil, false},
		{"unclosed tag soup", Document{Body: "<<<<>>>><p<p<p central bank raised interest rates <script"}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := f.Fingerprint(tc.doc)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("error %v, want success", err)
				}
				if r.Simhash == 0 || r.Recipe != RecipeVersion || r.LowInformation != tc.low || r.Chars == 0 {
					t.Errorf("result %+v, want low information %v", r, tc.low)
				}
				if tc.low && r.Simhash != Fingerprint(r.ExactHash|1) {
					t.Errorf("low-information fingerprint %v, want the exact text's %v", r.Simhash, Fingerprint(r.ExactHash|1))
				}
				return
			}
			for _, want := range tc.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("error %v, want one matching %v", err, want)
				}
			}
			if r.Simhash != 0 || r.Recipe != RecipeVersion {
				t.Errorf("failed result must have Simhash 0 and the recipe: %+v", r)
			}
		})
	}
}

func TestMaxBytesConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxBytes = 10
	f := *testFP(t)
	f.cfg = cfg
	if _, err := f.Fingerprint(Document{Title: "123456", Body: "abcdef"}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("12 bytes with MaxBytes 10: error %v, want ErrTooLarge", err)
	}
}

// FuzzFingerprint: any input gives a result or a documented error, never a
// panic, and successful results are deterministic and consistent.
func FuzzFingerprint(f *testing.F) {
	f.Add("", "")
	f.Add("标题", "江城市交通运输局本周宣布，全市公交车辆将在明年年底前完成电动化改造。")
	f.Add("Title", "The European Central Bank raised interest rates again on Thursday.")
	f.Add("", "<p>苹果公司CEO Tim Cook 在北京表示，iPhone 的销量好于预期。</p>")
	f.Add("\xff", "\xc3\x28 invalid")
	f.Add("", "<script>unclosed")
	f.Add("", "&amp;&lt;&#x4e2d;&#0;&#xffffffff; entity soup")
	f.Add("", "😀😀😀 ｆｕｌｌ ｗｉｄｔｈ ﬁ ligature Ⅻ")
	f.Add("", "don't can't o'clock 'quoted' it's")
	fp := testFP(f)
	f.Fuzz(func(t *testing.T, title, body string) {
		doc := Document{Title: title, Body: body}
		r, err := fp.Fingerprint(doc)
		if !utf8.ValidString(title) || !utf8.ValidString(body) {
			if !errors.Is(err, ErrInvalidUTF8) {
				t.Fatalf("invalid UTF-8: error %v", err)
			}
			return
		}
		_ = fp.Normalize(body)
		if err != nil {
			if !errors.Is(err, ErrEmpty) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("unexpected error %v", err)
			}
			if r.Simhash != 0 {
				t.Fatalf("error with nonzero simhash: %+v", r)
			}
			return
		}
		if (r.Words < fp.cfg.MinFeatures) != r.LowInformation || r.Simhash == 0 || r.Features < r.Words || r.Recipe != RecipeVersion {
			t.Fatalf("inconsistent result %+v", r)
		}
		if len(r.Top) > fp.cfg.TopFeatures || len(r.Top) > r.Features {
			t.Fatalf("top features: %+v", r)
		}
		for i := 1; i < len(r.Top); i++ {
			if r.Top[i].Weight > r.Top[i-1].Weight {
				t.Fatalf("top features not sorted: %+v", r.Top)
			}
		}
		r2, err := fp.Fingerprint(doc)
		if err != nil || r2.Simhash != r.Simhash || r2.ExactHash != r.ExactHash || r2.TitleSimhash != r.TitleSimhash {
			t.Fatalf("not deterministic: %+v vs %+v (%v)", r, r2, err)
		}
	})
}

// The hot path finds a Han word's weight class by the position of its gse
// token in the dictionary; it must agree with the slow path (POS test and
// map lookups) for every dictionary token, and refuse foreign pointers.
func TestTokenIndexMatchesSlowPath(t *testing.T) {
	f := testFP(t)
	toks := f.seg.Dict.Tokens
	for i := 0; i < len(toks); i += 1 + i%97 {
		j, ok := f.tokenIndex(&toks[i])
		if !ok || j != i {
			t.Fatalf("tokenIndex(&Tokens[%d]) = %d, %v", i, j, ok)
		}
		if got, want := f.tokenIDF[i], f.slowIDF(toks[i].Pos(), toks[i].Text()); got != want {
			t.Fatalf("token %q/%s: table weight %v, slow path %v", toks[i].Text(), toks[i].Pos(), got, want)
		}
	}
	other := toks[0]
	if _, ok := f.tokenIndex(&other); ok {
		t.Error("tokenIndex accepted a token outside the dictionary")
	}
}
