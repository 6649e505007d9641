package fingerprint

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalize returns the text simdex fingerprints and exact-hashes: markup
// stripped (tags, comments, entities, and the content of script, style and
// navigation elements), Unicode NFKC (which also folds full-width forms to
// half-width), lower case, typographic apostrophes folded to ', whitespace
// collapsed to single spaces within a line, empty lines and short boilerplate
// lines (copyright notices, share buttons, "上一篇/下一篇", editor credits...)
// dropped, lines joined with '\n'. Invalid UTF-8 is replaced by U+FFFD here;
// Fingerprint refuses it instead.
func (f *Fingerprinter) Normalize(s string) string {
	return normalize(s)
}

func normalize(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = stripMarkup(s)
	s = norm.NFKC.String(s)
	return cleanLines(s)
}

// blockTags become a line break when stripped, so text in separate blocks
// stays on separate lines (boilerplate detection is per line).
var blockTags = map[string]bool{
	"p": true, "br": true, "div": true, "li": true, "ul": true, "ol": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"tr": true, "td": true, "th": true, "table": true, "section": true,
	"article": true, "header": true, "footer": true, "aside": true,
	"blockquote": true, "pre": true, "hr": true, "dt": true, "dd": true,
	"title": true, "figcaption": true, "option": true, "main": true, "body": true,
}

// inlineTags vanish without a trace: "<b>新</b>闻" must stay one Han run.
// Other tags become a space.
var inlineTags = map[string]bool{
	"a": true, "b": true, "i": true, "u": true, "em": true, "strong": true,
	"span": true, "font": true, "small": true, "big": true, "sup": true,
	"sub": true, "mark": true, "abbr": true, "cite": true, "code": true,
	"q": true, "s": true, "wbr": true, "ins": true, "del": true,
}

// skipTags have content that is never article text.
var skipTags = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true,
	"nav": true, "head": true, "iframe": true, "svg": true, "select": true,
}

// stripMarkup removes HTML/XML markup and decodes entities. A '<' that does
// not start something tag-like ("a < b") is kept as text.
func stripMarkup(s string) string {
	if strings.IndexByte(s, '<') < 0 {
		if strings.IndexByte(s, '&') < 0 {
			return s
		}
		return html.UnescapeString(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '<' || i+1 >= len(s) || !tagStart(s[i+1]) {
			b.WriteByte(c)
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "<!--") {
			end := strings.Index(s[i+4:], "-->")
			if end < 0 {
				i = len(s)
			} else {
				i += 4 + end + 3
			}
			b.WriteByte(' ')
			continue
		}
		end := strings.IndexByte(s[i:], '>')
		if end < 0 { // not a tag after all
			b.WriteByte(c)
			i++
			continue
		}
		tag := s[i+1 : i+end]
		i += end + 1
		closing := strings.HasPrefix(tag, "/")
		name := tagName(strings.TrimPrefix(tag, "/"))
		switch {
		case !closing && skipTags[name] && !strings.HasSuffix(tag, "/"):
			// Skip to the matching close tag (or the end: unclosed script is
			// not text either).
			j := indexFold(s[i:], "</"+name)
			if j < 0 {
				i = len(s)
			} else {
				i += j
				if k := strings.IndexByte(s[i:], '>'); k >= 0 {
					i += k + 1
				} else {
					i = len(s)
				}
			}
			b.WriteByte('\n')
		case blockTags[name]:
			b.WriteByte('\n')
		case inlineTags[name]:
		default:
			b.WriteByte(' ')
		}
	}
	out := b.String()
	if strings.IndexByte(out, '&') >= 0 {
		out = html.UnescapeString(out)
	}
	return out
}

func tagStart(c byte) bool {
	return c == '/' || c == '!' || c == '?' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// tagName returns the lower-case element name at the start of a tag body.
func tagName(t string) string {
	n := 0
	for n < len(t) && n < 16 {
		c := t[n]
		if !(c|0x20 >= 'a' && c|0x20 <= 'z') && !(c >= '0' && c <= '9') {
			break
		}
		n++
	}
	t = t[:n]
	for i := 0; i < len(t); i++ {
		if t[i] >= 'A' && t[i] <= 'Z' {
			return strings.ToLower(t)
		}
	}
	return t
}

// indexFold is strings.Index for an ASCII needle, ignoring ASCII case.
func indexFold(s, needle string) int {
	n := len(needle)
	for i := 0; i+n <= len(s); i++ {
		if s[i] == '<' && strings.EqualFold(s[i:i+n], needle) {
			return i
		}
	}
	return -1
}

// boilerplateMarkers mark a short line as page furniture rather than text.
// Markers are matched against the lower-cased, NFKC-folded line.
var boilerplateMarkers = []string{
	"copyright", "©", "all rights reserved", "版权所有", "版权声明", "责任编辑",
	"编辑:", "来源:", "原标题", "上一篇", "下一篇", "分享到", "阅读全文", "点击查看",
	"扫一扫", "关注我们", "返回首页", "返回顶部", "相关阅读", "相关新闻", "推荐阅读",
	"share this", "share on", "related articles", "related stories", "read more",
	"follow us", "subscribe", "sign up", "newsletter", "cookie", "privacy policy",
	"terms of use", "advertisement", "click here",
}

// boilerplateLines are whole lines that are page furniture on their own.
var boilerplateLines = map[string]bool{
	"share": true, "tweet": true, "print": true, "email": true, "home": true,
	"menu": true, "comments": true, "分享": true, "打印": true, "评论": true,
	"首页": true, "返回": true, "广告": true,
}

// maxBoilerplateRunes: only lines this short are tested for boilerplate, so
// an article sentence that happens to mention "copyright" survives.
const maxBoilerplateRunes = 60

// cleanLines lower-cases, folds apostrophes, collapses whitespace, and drops
// empty and boilerplate lines.
func cleanLines(s string) string {
	var out strings.Builder
	out.Grow(len(s))
	line := make([]byte, 0, 256)
	flush := func() {
		if len(line) == 0 || (len(line) <= maxBoilerplateRunes*4 && isBoilerplate(string(line))) {
			line = line[:0]
			return
		}
		if out.Len() > 0 {
			out.WriteByte('\n')
		}
		out.Write(line)
		line = line[:0]
	}
	space := false
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029' || r == '\f' || r == '\v':
			space = false
			flush()
			continue
		case r < utf8.RuneSelf:
			if r == ' ' || r == '\t' {
				space = len(line) > 0
				continue
			}
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			if space {
				line = append(line, ' ')
				space = false
			}
			line = append(line, byte(r))
			continue
		case unicode.IsSpace(r):
			space = len(line) > 0
			continue
		case r == '\u2019' || r == '\u2018':
			r = '\''
		case r >= 0x3000 && r <= 0x9FFF:
			// CJK symbols, kana, Han: no case and no spaces here (U+3000,
			// the ideographic space, is folded to ' ' by NFKC before this);
			// skips the case table search for most Chinese text.
		default:
			r = unicode.ToLower(r)
		}
		if space {
			line = append(line, ' ')
			space = false
		}
		line = utf8.AppendRune(line, r)
	}
	flush()
	return out.String()
}

func isBoilerplate(l string) bool {
	if utf8.RuneCountInString(l) > maxBoilerplateRunes {
		return false
	}
	if boilerplateLines[l] {
		return true
	}
	for _, m := range boilerplateMarkers {
		if strings.Contains(l, m) {
			return true
		}
	}
	return false
}
