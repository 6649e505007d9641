package pairs

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Site is one publisher's page furniture: the same header, byline
// pattern, related-links heading and footer around every article it
// publishes. Unlike the mirror templates of the pairs (one article in
// many sites), a Site puts many articles in one template, so the template
// recurs across stored documents with different content.
type Site struct {
	Lang    string
	Name    string
	Header  []string
	Footer  []string
	Related string   // heading of the related-links block
	Authors []string // bylines draw from these
}

var (
	bylineEN = []string{"Staff Writer", "Senior Correspondent", "Contributing Editor", "Reporter", "Columnist", "News Desk"}
	authorEN = []string{"Alex Morgan", "Jamie Chen", "Riley Brooks", "Taylor Reed", "Jordan Price", "Casey Patel",
		"Morgan Hayes", "Quinn Foster", "Avery Collins", "Drew Sullivan", "Harper Lane", "Rowan Ellis"}
	authorZH = []string{"记者 周明", "记者 吴昊", "通讯员 孙丽", "记者 郑凯", "特约撰稿 冯雪", "记者 许涛",
		"记者 何静", "编辑 高远", "记者 罗琳", "通讯员 谢峰", "记者 宋佳", "记者 韩冰"}
)

// NewSite returns the site of lang for split, the same on every call:
// dev and test sites draw their furniture from disjoint vocabularies.
func NewSite(lang, split string) Site {
	v := newVocab(split)
	r := rand.New(rand.NewPCG(0x517e, xxhash.Sum64String("site:"+lang+":"+split)))
	t := newTemplate(r, v, lang, "site-"+lang+"-"+split)
	s := Site{Lang: lang, Name: t.header[0], Header: t.header, Footer: t.footer}
	rel := v.related[lang]
	s.Related = rel[r.IntN(len(rel))]
	authors := authorEN
	if lang == "zh" {
		authors = authorZH
	}
	for i, a := range authors {
		if split == "all" || (i%2 == 0) == (split == "dev") {
			s.Authors = append(s.Authors, a)
		}
	}
	return s
}

// Page renders one article of the site: header, title, byline (an author
// and a date drawn from r), body, the related-links block (titles of other
// articles) and footer.
func (s Site) Page(r *rand.Rand, title, body string, related []string) string {
	parts := append([]string{}, s.Header...)
	if title != "" {
		parts = append(parts, title)
	}
	a := s.Authors[r.IntN(len(s.Authors))]
	y, m, d := 2015+r.IntN(11), 1+r.IntN(12), 1+r.IntN(28)
	if s.Lang == "zh" {
		parts = append(parts, fmt.Sprintf("%s  发布时间：%d-%02d-%02d %02d:%02d  来源：%s", a, y, m, d, r.IntN(24), r.IntN(60), s.Name))
	} else {
		parts = append(parts, fmt.Sprintf("By %s, %s | %s %d, %d", a, bylineEN[r.IntN(len(bylineEN))], monthsEN[m-1], d, y))
	}
	parts = append(parts, body)
	if len(related) > 0 {
		parts = append(parts, s.Related)
		parts = append(parts, related...)
	}
	parts = append(parts, s.Footer...)
	return strings.Join(parts, "\n")
}

var monthsEN = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
