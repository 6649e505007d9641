package fingerprint

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Normalize returns the text simdex fingerprints and exact-hashes: markup
// stripped (tags, comments, entities, and the content of script, style,
// navigation, header, footer and aside elements), Unicode NFKC (which also
// folds full-width forms to half-width), lower case, typographic apostrophes
// folded to ', whitespace collapsed to single spaces within a line, a
// trailing "read more" link cut off its line (the teaser stays), empty
// lines, quoted lines ("> ", recipe 4), short boilerplate lines (copyright notices, share buttons,
// "上一篇/下一篇", editor credits, ads...), navigation bars and breadcrumbs
// (three or more very short entries), and "related articles" blocks (a list
// heading and the unpunctuated lines after it) dropped, lines joined with
// '\n'. Since recipe 2. Invalid UTF-8 is replaced by U+FFFD here;
// Fingerprint refuses it instead.
func (f *Fingerprinter) Normalize(s string) string {
	return normalize(s)
}

func normalize(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = stripMarkup(s)
	s = nfkcString(s)
	return trimEdgeLines(dropQuoted(cleanLines(s)))
}

// dropQuoted drops the lines a mail quotes ("> ..."), unless every line is
// quoted (recipe 4): a reply's own text is its content, and the mail it
// quotes is another document (stored on its own, it is found as that
// one). A reply that quotes a whole mail and adds a line is not that
// mail's copy.
func dropQuoted(text string) string {
	if !strings.HasPrefix(text, ">") && !strings.Contains(text, "\n>") {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, ">") {
			continue
		}
		b.WriteString(line)
	}
	own := strings.TrimSuffix(b.String(), "\n")
	if own == "" {
		return text
	}
	return own
}

// maxEdgeRunes bounds the lines trimEdgeLines may drop.
const maxEdgeRunes = 24

// trimEdgeLines drops short unpunctuated lines at the head and the tail of
// a text that has prose between them (recipe 3): a site's masthead, a
// section label, a sign-off or a footer link that no phrase list names.
// Such lines carry no sentence, so whether a copy keeps them says nothing
// about its body; the signal is their place and shape, not their words,
// so it holds for sites never seen. A text without a longer line (a
// title, a list, a short note) is left alone.
func trimEdgeLines(text string) string {
	if strings.IndexByte(text, '\n') < 0 {
		return text
	}
	// Byte offsets of the first prose line's start and the last prose
	// line's end; the result is a substring (no allocation).
	first, last := -1, -1
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off
		}
		l := text[off:end]
		if first < 0 && l == "--" {
			// A mail's signature separator: what stands above it is the
			// mail's own text, however short, not a masthead (recipe 4).
			first = 0
		}
		if utf8.RuneCountInString(l) > maxEdgeRunes || hasSentenceMark(l) {
			if first < 0 {
				first = off
			}
			last = end
		}
		off = end + 1
	}
	if first < 0 {
		return text
	}
	return text[first:last]
}

// hasSentenceMark reports whether l contains sentence punctuation, a
// colon, or (in Chinese) a clause comma: a label line ("Weather",
// "南方日报") has none, where a short line of text ("前一张幻灯片，无效果",
// a one-line mail) has (recipe 4).
func hasSentenceMark(l string) bool {
	if strings.ContainsAny(l, ".!?;:。！？；：、") {
		return true
	}
	// NFKC has folded '，' to ','; a Latin comma counts beside Han text
	// only ("Reuters, London" is a dateline).
	i := strings.IndexByte(l, ',')
	return i >= 0 && (hanNear(l[:i], false) || hanNear(l[i+1:], true))
}

// hanNear reports whether the rune of s next to a comma (its last, or
// with first its first) is a Han character.
func hanNear(s string, first bool) bool {
	var r rune
	if first {
		r, _ = utf8.DecodeRuneInString(s)
	} else {
		r, _ = utf8.DecodeLastRuneInString(s)
	}
	return isHan(r)
}

// blockTags become a line break when stripped, so text in separate blocks
// stays on separate lines (boilerplate detection is per line).
var blockTags = map[string]bool{
	"p": true, "br": true, "div": true, "li": true, "ul": true, "ol": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"tr": true, "td": true, "th": true, "table": true, "section": true,
	"article":    true,
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
	// Page furniture in HTML5: site header, footer and side column
	// ("related articles", ads) are the site's, not the article's.
	"header": true, "footer": true, "aside": true, "form": true, "button": true,
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
	"terms of use", "advertisement", "click here", "sponsored", "you are here",
	"without permission", "广告", "推广", "赞助", "举报", "当前位置", "您的位置",
}

// listHeads start a block of links to other pages ("related articles"):
// the short, unpunctuated lines after one are titles, not text.
var listHeads = []string{
	"related", "you may also like", "more from", "read next", "most popular",
	"recommended", "see also", "also read", "相关", "猜你喜欢", "热门", "延伸阅读",
	"最新文章", "推荐", "更多",
}

// readMoreTails end a truncated teaser; the text before them is content.
var readMoreTails = []string{"read more", "continue reading", "read the full story",
	"阅读全文", "查看全文", "全文阅读", "更多内容", "展开全文"}

// boilerplateLines are whole lines that are page furniture on their own.
var boilerplateLines = map[string]bool{
	"share": true, "tweet": true, "print": true, "email": true, "home": true,
	"menu": true, "comments": true, "分享": true, "打印": true, "评论": true,
	"首页": true, "返回": true, "广告": true,
}

// maxBoilerplateRunes: only lines this short are tested for boilerplate, so
// an article sentence that happens to mention "copyright" survives.
const maxBoilerplateRunes = 60

// Classes of bytes in cleanLines' ASCII path.
const (
	asciiKeep  = iota // kept as it is
	asciiUpper        // lowered
	asciiSpace        // collapsed into one space within a line
	asciiBreak        // ends the line
	asciiNot          // 0x80 and up: a multi-byte rune, for the general path
)

var asciiClass = func() (t [256]uint8) {
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = asciiNot
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = asciiUpper
	}
	t[' '], t['\t'] = asciiSpace, asciiSpace
	t['\n'], t['\r'], t['\f'], t['\v'] = asciiBreak, asciiBreak, asciiBreak, asciiBreak
	return t
}()

// cleanLines lower-cases, folds apostrophes, collapses whitespace, and drops
// empty and boilerplate lines.
func cleanLines(s string) string {
	var out strings.Builder
	out.Grow(len(s))
	line := make([]byte, 0, 256)
	inList := false      // inside a "related articles" block
	var dropped []string // boilerplate lines dropped, for dropEchoes
	flush := func() {
		if len(line) > 0 {
			line = trimReadMore(line)
		}
		if len(line) == 0 {
			return
		}
		if len(line) <= maxBoilerplateRunes*4 {
			l := string(line)
			if inList && !endsSentence(l) {
				line = line[:0]
				return
			}
			inList = false
			if isListHead(l) {
				inList = true
				line = line[:0]
				return
			}
			if isBoilerplate(l) {
				dropped = append(dropped, l)
				line = line[:0]
				return
			}
			if isNavLine(l) || isMetaLine(l) {
				line = line[:0]
				return
			}
		}
		inList = false
		if out.Len() > 0 {
			out.WriteByte('\n')
		}
		out.Write(line)
		line = line[:0]
	}
	for i := 0; i <= len(s); {
		var n int
		line, n = foldLine(line[:0], s[i:])
		flush()
		i += n
	}
	if len(dropped) > 0 {
		return dropEchoes(out.String(), dropped)
	}
	return out.String()
}

// foldLine appends to dst the first line of s lower-cased, with
// typographic apostrophes folded to ', whitespace runs collapsed to one
// space (none at the ends) and traditional Chinese folded to simplified, and
// returns it with the bytes it consumed: the line and its line break.
func foldLine(dst []byte, s string) ([]byte, int) {
	space := false
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			switch asciiClass[c] {
			case asciiBreak:
				return dst, i + 1
			case asciiSpace:
				space = len(dst) > 0
				i++
				continue
			}
			if space {
				dst = append(dst, ' ')
				space = false
			}
			// A run of bytes kept as they are, appended at once (English
			// text is mostly such runs); an upper-case letter is lowered.
			j := i
			for j < len(s) && asciiClass[s[j]] == asciiKeep {
				j++
			}
			if j == i {
				dst = append(dst, c+('a'-'A'))
				j++
			} else {
				dst = append(dst, s[i:j]...)
			}
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '\u2028' || r == '\u2029':
			return dst, i
		case unicode.IsSpace(r):
			space = len(dst) > 0
			continue
		case r == '\u2019' || r == '\u2018':
			r = '\''
		case r >= 0x3000 && r <= 0x9FFF:
			// CJK symbols, kana, Han: no case and no spaces here (U+3000,
			// the ideographic space, is folded to ' ' by NFKC before this);
			// skips the case table search for most Chinese text.
			// Traditional characters fold to simplified (recipe 3).
			r = foldTrad(r)
		default:
			r = foldTrad(unicode.ToLower(r))
		}
		if space {
			dst = append(dst, ' ')
			space = false
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst, len(s) + 1
}

// maxEchoRunes bounds the lines dropEchoes may drop: a site name or slogan.
const maxEchoRunes = 20

// dropEchoes drops short unpunctuated lines that recur inside a dropped
// boilerplate line: a site's masthead ("Daily Tribune") is named again in
// its copyright notice, and is no more the article's than the notice is.
func dropEchoes(text string, dropped []string) string {
	var b strings.Builder
	changed := false
	for line := range strings.Lines(text) {
		l := strings.TrimSuffix(line, "\n")
		if utf8.RuneCountInString(l) <= maxEchoRunes && !endsSentence(l) && echoed(l, dropped) {
			changed = true
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	if !changed || b.Len() == 0 {
		return text
	}
	return b.String()
}

func echoed(l string, dropped []string) bool {
	for _, d := range dropped {
		if len(d) > len(l) && strings.Contains(d, l) {
			return true
		}
	}
	return false
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

// trimReadMore cuts a trailing "read more" link (and the ellipsis before
// it) off a line, keeping the teaser text: a truncated copy keeps all it has.
func trimReadMore(line []byte) []byte {
	l := string(line)
	for _, t := range readMoreTails {
		if strings.HasSuffix(l, t) {
			l = strings.TrimRight(strings.TrimSuffix(l, t), " .…>»:：")
			return line[:len(l)]
		}
	}
	return line
}

// endsSentence reports whether a line ends like prose (a sentence mark),
// as list entries and link titles do not.
func endsSentence(l string) bool {
	r, _ := utf8.DecodeLastRuneInString(strings.TrimRight(l, " \"'”’)）」』"))
	switch r {
	case '.', '!', '?', ';', '。', '！', '？', '；':
		return true
	}
	return false
}

// isListHead reports whether a short line introduces a list of links.
func isListHead(l string) bool {
	if utf8.RuneCountInString(l) > 30 || endsSentence(l) {
		return false
	}
	for _, h := range listHeads {
		if strings.HasPrefix(l, h) {
			return true
		}
	}
	return false
}

// navSeps separate the entries of navigation bars and breadcrumbs.
var navSeps = []string{" | ", " > ", " » ", " · ", " / ", "|", "»", "›"}

// isNavLine reports whether a short line is a navigation bar or breadcrumb:
// three or more very short entries split by a separator or, for Chinese,
// by spaces ("首页 新闻 体育 财经"). Sentences have longer pieces.
func isNavLine(l string) bool {
	for _, sep := range navSeps {
		if !strings.Contains(l, sep) {
			continue
		}
		parts := strings.Split(l, sep)
		if len(parts) >= 3 && allShort(parts, 3) {
			return true
		}
	}
	// Chinese menu: four or more space-separated Han entries of at most
	// four characters. One pass, no allocation: most lines fail at once.
	entries, n := 0, 0
	for _, r := range l {
		switch {
		case r == ' ':
			n = 0
		case isHan(r):
			if n == 0 {
				entries++
			}
			if n++; n > 4 {
				return false
			}
		default:
			return false
		}
	}
	return entries >= 4
}

// allShort reports whether every part has at most maxWords words (a Han
// part at most 2*maxWords characters) and no sentence mark.
func allShort(parts []string, maxWords int) bool {
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if strings.Count(p, " ")+1 > maxWords || utf8.RuneCountInString(p) > 6*maxWords || endsSentence(p) {
			return false
		}
	}
	return true
}

// isMetaLine reports whether a short line is mostly digits (a dateline,
// "updated 2025-10-22 22:09 · 9443 views", a counter): its numbers change
// between copies and its few words say nothing about the text.
func isMetaLine(l string) bool {
	if endsSentence(l) {
		return false
	}
	digits, other := 0, 0
	for _, r := range l {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r != ' ':
			other++
		}
	}
	return digits >= 4 && digits*10 >= (digits+other)*3
}
