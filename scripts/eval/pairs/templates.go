package pairs

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// template is one site's page furniture: what a mirror or an aggregator
// wraps around the same article body.
type template struct {
	id     string
	header []string // site name, navigation, breadcrumbs, dateline
	footer []string // share bar, copyright, contact, licence
}

// Vocabulary the generator builds site templates from. Templates are
// combined at random (from the seed), so a held-out seed sees sites it
// was never tuned on.
var (
	siteEN = []string{"Daily Tribune", "Metro Herald", "The Evening Post", "Valley News Online", "Capitol Report",
		"Global Wire", "The Morning Ledger", "Harbor Gazette", "NewsNow", "Prairie Times", "Civic Review", "TechPulse"}
	navEN = []string{"Home", "News", "World", "Politics", "Business", "Sports", "Opinion", "Tech", "Science",
		"Health", "Arts", "Travel", "Video", "Podcasts", "Weather", "Obituaries", "Subscribe", "Sign in"}
	footEN = []string{"Copyright © %d %s. All rights reserved.", "Terms of Use | Privacy Policy | Cookie Settings",
		"Share this article: Facebook Twitter Email Print", "Contact us: newsroom@example.com",
		"Reproduction without permission is prohibited.", "Follow %s on social media for the latest updates.",
		"Advertise with us | Careers | Help Center", "This story was originally published on %s."}
	siteZH = []string{"华夏资讯网", "东方日报", "南方快讯", "科技前沿", "新闻在线", "每日头条", "环球视点", "都市晚报",
		"财经观察", "云端技术社区", "开源帮助中心", "数字生活网"}
	navZH = []string{"首页", "新闻", "国内", "国际", "财经", "科技", "体育", "娱乐", "军事", "汽车", "房产", "教育",
		"健康", "视频", "图片", "论坛", "博客", "登录", "注册"}
	footZH = []string{"版权所有 © %d %s 保留所有权利", "关于我们 | 联系我们 | 广告服务 | 隐私政策",
		"分享到：微博 微信 QQ空间", "未经授权禁止转载，违者必究", "责任编辑：%s", "本文来源：%s",
		"举报电话：010-12345678", "扫描二维码关注%s官方微信"}
	editorsZH = []string{"张伟", "王芳", "李娜", "刘洋", "陈静", "杨磊", "赵敏", "黄强"}
	adsEN     = []string{"ADVERTISEMENT", "Advertisement: Save 50% on your first order - shop now", "Sponsored: Refinance today and lower your monthly payment",
		"Sponsored content: The one trick doctors don't want you to know", "AD - Download our app for breaking news alerts", "Story continues below advertisement",
		"Promoted: Compare car insurance quotes in minutes", "Partner offer - free shipping on orders over $35"}
	adsZH = []string{"【广告】限时特惠！全场商品低至五折，立即抢购", "推广：三分钟学会理财，年化收益稳健增长", "广告 点击下载客户端，领取新人红包",
		"赞助内容：暑期旅游优惠套餐，热线400-800-1234", "【推荐】专业装修设计，免费上门量房", "商业推广 新款手机今日开售，预约享好礼"}
	relatedEN = []string{"Related articles:", "You may also like", "More from this section", "Read next", "Most popular", "Recommended for you"}
	relatedZH = []string{"相关阅读：", "猜你喜欢", "热门推荐", "延伸阅读", "最新文章", "编辑推荐"}
)

// vocab is the boilerplate and rewording vocabulary one split draws from.
// The dev and test splits get disjoint halves of every list (and of the
// synonym tables), so a boilerplate filter or rewording rule fitted to
// the dev pairs meets words it has never seen on the test pairs.
type vocab struct {
	site, nav, foot, ads, related map[string][]string // by language
	synonyms                      map[string]map[string]string
}

func newVocab(split string) vocab {
	half := func(xs []string) []string {
		if split == "all" {
			return xs
		}
		var out []string
		for i, x := range xs {
			if (i%2 == 0) == (split == "dev") {
				out = append(out, x)
			}
		}
		return out
	}
	halfMap := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for i, k := range sortedKeys(m) {
			if split == "all" || (i%2 == 0) == (split == "dev") {
				out[k] = m[k]
			}
		}
		return out
	}
	both := func(en, zh []string) map[string][]string {
		return map[string][]string{"en": half(en), "zh": half(zh)}
	}
	return vocab{
		site: both(siteEN, siteZH), nav: both(navEN, navZH), foot: both(footEN, footZH),
		ads: both(adsEN, adsZH), related: both(relatedEN, relatedZH),
		synonyms: map[string]map[string]string{"en": halfMap(synonymsEN), "zh": halfMap(synonymsZH)},
	}
}

// newTemplate draws a site template for lang.
func newTemplate(r *rand.Rand, v vocab, lang, id string) template {
	site, nav, foot, sep := v.site[lang], v.nav[lang], v.foot[lang], " | "
	if lang == "zh" {
		sep = " "
	}
	name := site[r.IntN(len(site))]
	t := template{id: id}
	t.header = append(t.header, name)
	items := pickN(r, nav, 4+r.IntN(6))
	t.header = append(t.header, strings.Join(items, sep))
	if r.IntN(2) == 0 {
		if lang == "zh" {
			t.header = append(t.header, fmt.Sprintf("当前位置：%s > %s > 正文", items[0], items[1]))
		} else {
			t.header = append(t.header, fmt.Sprintf("You are here: %s > %s", items[0], items[1]))
		}
	}
	for _, f := range pickN(r, foot, 2+r.IntN(3)) {
		switch strings.Count(f, "%") {
		case 2:
			f = fmt.Sprintf(f, 1995+r.IntN(30), name)
		case 1:
			arg := name
			if lang == "zh" && strings.Contains(f, "编辑") {
				arg = editorsZH[r.IntN(len(editorsZH))]
			}
			f = fmt.Sprintf(f, arg)
		}
		t.footer = append(t.footer, f)
	}
	return t
}

// wrap puts body (and the title, as the page heading) inside the
// template's furniture.
func (t template) wrap(title, body string) string {
	parts := append([]string{}, t.header...)
	if title != "" {
		parts = append(parts, title)
	}
	parts = append(parts, body)
	parts = append(parts, t.footer...)
	return strings.Join(parts, "\n")
}

// adBlock is an advertisement as scraped inline from a page.
func adBlock(r *rand.Rand, v vocab, lang string) string {
	ads := v.ads[lang]
	return ads[r.IntN(len(ads))]
}

// relatedBlock is a "related articles" list whose entries are titles of
// other documents.
func relatedBlock(r *rand.Rand, v vocab, lang string, titles []string) string {
	heads := v.related[lang]
	return heads[r.IntN(len(heads))] + "\n" + strings.Join(titles, "\n")
}

func pickN(r *rand.Rand, from []string, n int) []string {
	idx := r.Perm(len(from))
	if n > len(idx) {
		n = len(idx)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = from[idx[i]]
	}
	return out
}

// html renders a page as a site would serve it: the template's header as
// a navigation bar, the body as an article of paragraphs, a related list
// in an aside, the footer, and script and style elements.
func (t template) html(r *rand.Rand, lang, title, body string, related []string) string {
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=%q><head><meta charset=\"utf-8\"><title>%s - %s</title>\n", lang, esc(title), esc(t.header[0]))
	fmt.Fprintf(&b, "<style>body{font-family:sans-serif}.nav li{display:inline}</style>\n<script>window.dataLayer=[];function track(id){dataLayer.push({page:%d})}</script></head>\n<body>\n", r.IntN(100000))
	fmt.Fprintf(&b, "<header><div class=\"logo\">%s</div><nav class=\"nav\"><ul>", esc(t.header[0]))
	for _, item := range strings.FieldsFunc(t.header[1], func(c rune) bool { return c == '|' || c == ' ' }) {
		fmt.Fprintf(&b, "<li><a href=\"/%s\">%s</a></li>", esc(strings.ToLower(item)), esc(item))
	}
	b.WriteString("</ul></nav></header>\n<main><article>\n")
	if title != "" {
		fmt.Fprintf(&b, "<h1>%s</h1>\n", esc(title))
	}
	for _, p := range strings.Split(body, "\n") {
		if p = strings.TrimSpace(p); p != "" {
			fmt.Fprintf(&b, "<p>%s</p>\n", esc(p))
		}
	}
	b.WriteString("</article></main>\n<aside><ul>")
	for _, rt := range related {
		fmt.Fprintf(&b, "<li><a href=\"/a/%d\">%s</a></li>", r.IntN(1000000), esc(rt))
	}
	b.WriteString("</ul></aside>\n<footer>")
	for _, f := range t.footer {
		fmt.Fprintf(&b, "<p>%s</p>", esc(f))
	}
	b.WriteString("</footer>\n</body></html>\n")
	return b.String()
}
