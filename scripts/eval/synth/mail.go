package synth

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/simdex/simdex/scripts/eval/corpus"
	"github.com/simdex/simdex/scripts/eval/textutil"
)

// Vocabulary of mail signatures and list footers. The dev and test splits
// use disjoint halves of every list (authors, titles, organisations, quote
// lines, lists, domains).
var (
	firstEN = []string{"Anna", "Brian", "Carla", "David", "Elena", "Frank", "Grace", "Henry", "Irene", "Jack",
		"Karen", "Louis", "Maria", "Nathan", "Olivia", "Peter", "Rachel", "Samuel", "Tina", "Victor"}
	lastEN = []string{"Anderson", "Becker", "Castillo", "Dawson", "Eriksen", "Fischer", "Gallagher", "Hoffman", "Ivanova", "Jensen",
		"Kowalski", "Lindqvist", "Moreau", "Novak", "O'Brien", "Petrov", "Quinlan", "Rossi", "Schmidt", "Tanaka"}
	titleEN = []string{"Senior Software Engineer", "Release Manager", "Product Manager", "Systems Administrator",
		"Research Scientist", "Technical Writer", "Engineering Lead", "Support Engineer", "QA Lead", "Developer Advocate",
		"Site Reliability Engineer", "Community Manager"}
	orgEN = []string{"Northwind Systems", "Bluefin Labs", "Acme Data Corp.", "Cobalt Networks", "Helios Software",
		"Granite Analytics", "Orbital Tools Inc.", "Pinecrest University", "Lumen Foundation", "Vertex Cloud",
		"Redwood Instruments", "Summit Research Group"}
	quoteEN = []string{`"Simplicity is prerequisite for reliability."`, `"Talk is cheap. Show me the code."`,
		`"Premature optimization is the root of all evil."`, `"Make it work, make it right, make it fast."`,
		`"The best way to predict the future is to invent it."`, `"Weeks of coding can save you hours of planning."`,
		`"There are only two hard things in computer science."`, `"Measure twice, cut once."`,
		`"Be liberal in what you accept."`, `"If it hurts, do it more often."`,
		`"Perfection is achieved when there is nothing left to take away."`, `"Release early, release often."`}
	listEN   = []string{"dev-discuss", "users", "announce", "packaging", "infra", "docs-team", "security", "general", "i18n", "board"}
	domainEN = []string{"example.org", "opensource.example", "lists.example.net", "community.example.com", "project.example"}

	surnameZH = []string{"王", "李", "张", "刘", "陈", "杨", "黄", "赵", "吴", "周", "徐", "孙", "马", "朱", "胡", "郭", "何", "高", "林", "罗"}
	givenZH   = []string{"伟", "芳", "娜", "敏", "静", "磊", "洋", "艳", "勇", "军", "杰", "娟", "涛", "明", "超", "秀英", "霞", "平", "刚", "桂英"}
	titleZH   = []string{"高级软件工程师", "产品经理", "系统管理员", "测试主管", "技术文档工程师", "研发总监",
		"运维工程师", "项目经理", "架构师", "技术支持工程师", "社区经理", "数据分析师"}
	orgZH = []string{"北京云帆科技有限公司", "上海数智信息技术有限公司", "深圳前海开源软件有限公司", "杭州星河网络科技有限公司",
		"成都天府软件园", "南京鼎新数据有限公司", "武汉光谷信息技术有限公司", "广州南粤科技股份有限公司",
		"西安秦川软件有限公司", "苏州工业园区开源协会", "中关村开源促进会", "清华大学计算机系"}
	quoteZH = []string{"“路漫漫其修远兮，吾将上下而求索。”", "“不积跬步，无以至千里。”", "“工欲善其事，必先利其器。”",
		"“知之为知之，不知为不知，是知也。”", "“千里之行，始于足下。”", "“学而不思则罔，思而不学则殆。”",
		"“天行健，君子以自强不息。”", "“纸上得来终觉浅，绝知此事要躬行。”", "“业精于勤，荒于嬉。”",
		"“三人行，必有我师焉。”", "“温故而知新，可以为师矣。”", "“书山有路勤为径。”"}
	listZH   = []string{"开发者讨论", "用户交流", "版本发布通知", "文档翻译组", "基础设施", "安全公告", "社区活动", "打包维护", "本地化", "技术委员会"}
	listIDZH = []string{"dev-zh", "users-zh", "announce-zh", "docs-zh", "infra-zh", "security-zh", "events-zh", "packaging-zh", "l10n-zh", "tc-zh"}
	domainZH = []string{"lists.example.cn", "kaiyuan.example.cn", "shequ.example.com.cn", "mail.example.org.cn", "oss.example.cn"}
)

// mailAuthor is one author's name (for greetings and "wrote:" lines) and
// multi-line signature.
type mailAuthor struct {
	first, full string
	signature   []string
}

// mailList is one list's name and footer.
type mailList struct {
	name   string
	footer []string
}

func mailCast(lang, split string) ([]mailAuthor, []mailList) {
	r := rand.New(rand.NewPCG(0x3a11, xxhash.Sum64String("mail-cast:"+lang+":"+split)))
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	var authors []mailAuthor
	var lists []mailList
	if lang == "en" {
		firsts, lasts := half(firstEN, split), half(lastEN, split)
		titles, orgs, quotes := half(titleEN, split), half(orgEN, split), half(quoteEN, split)
		for i := range 30 {
			first, last := firsts[i%len(firsts)], lasts[(i*7/len(firsts)+i)%len(lasts)]
			full := first + " " + last
			authors = append(authors, mailAuthor{first: first, full: full, signature: []string{
				"-- ", full, pick(titles) + ", " + pick(orgs),
				fmt.Sprintf("Phone: +1 (555) %03d-%04d | %s.%s@%s", r.IntN(1000), r.IntN(10000), strings.ToLower(first), strings.ToLower(strings.ReplaceAll(last, "'", "")), strings.ToLower(strings.Fields(pick(orgs))[0])+".example.com"),
				pick(quotes),
			}})
		}
		domains := half(domainEN, split)
		for _, l := range half(listEN, split) {
			dom := pick(domains)
			lists = append(lists, mailList{name: l, footer: []string{
				"_______________________________________________",
				l + " mailing list",
				l + "@" + dom,
				fmt.Sprintf("To unsubscribe, send a message to %s-leave@%s", l, dom),
				fmt.Sprintf("Archives: https://%s/archives/list/%s@%s/", dom, l, dom),
			}})
		}
		return authors, lists
	}
	surnames, givens := half(surnameZH, split), half(givenZH, split)
	titles, orgs, quotes := half(titleZH, split), half(orgZH, split), half(quoteZH, split)
	for i := range 30 {
		given := givens[(i*3+i/len(surnames))%len(givens)]
		full := surnames[i%len(surnames)] + given
		authors = append(authors, mailAuthor{first: full, full: full, signature: []string{
			"--", full, pick(titles) + " | " + pick(orgs),
			fmt.Sprintf("电话：010-%04d%04d  手机：1%02d-%04d-%04d", r.IntN(10000), r.IntN(10000), 30+r.IntN(60), r.IntN(10000), r.IntN(10000)),
			pick(quotes),
		}})
	}
	domains := half(domainZH, split)
	names, ids := half(listZH, split), half(listIDZH, split)
	for i, l := range names {
		dom := pick(domains)
		lists = append(lists, mailList{name: l, footer: []string{
			"------------------------------",
			l + "邮件列表 " + ids[i] + "@" + dom,
			fmt.Sprintf("退订请发送邮件至 %s-unsubscribe@%s", ids[i], dom),
			fmt.Sprintf("本邮件列表归档 https://%s/archives/%s/", dom, ids[i]),
		}})
	}
	return authors, lists
}

// Mails writes threads of 1-5 mails from the donors' sentences: every
// mail has a body of 1-4 consecutive sentences no other mail uses (more
// when they are shorter than minBody), its
// author's signature and its list's footer; replies may greet the
// previous author and quote one or two of their lines ("> ..."). With 30
// authors and 5 lists per language and split, every signature and footer
// recurs in tens of mails with different bodies.
func Mails(donors []corpus.Doc, lang string) []corpus.Doc {
	var pool []string
	for _, d := range donors {
		for _, s := range sentences(d) {
			if n := len([]rune(s)); n >= 8 && n <= 400 {
				pool = append(pool, s)
			}
		}
	}
	casts := map[string][2]any{}
	for _, split := range []string{"dev", "test"} {
		a, l := mailCast(lang, split)
		casts[split] = [2]any{a, l}
	}
	r := rand.New(rand.NewPCG(0x3a12, xxhash.Sum64String("mails:"+lang)))
	var out []corpus.Doc
	next := 0
	for t := 0; next < len(pool) && len(out) < 2400; t++ {
		key := fmt.Sprintf("mail:%s/t%04d", lang, t)
		split := splitOf(key)
		authors, lists := casts[split][0].([]mailAuthor), casts[split][1].([]mailList)
		list := lists[r.IntN(len(lists))]
		var prev *mailAuthor
		var prevBody []string
		var subject string
		for n := range 1 + r.IntN(5) {
			k := 1 + r.IntN(4)
			// At least minBody characters: a body is never a bare "Thanks."
			for next+k <= len(pool) && k < 8 && utf8.RuneCountInString(textutil.Join(lang, pool[next:next+k])) < minBody[lang] {
				k++
			}
			if next+k > len(pool) {
				break
			}
			body := pool[next : next+k]
			next += k
			if n == 0 {
				subject = subjectOf(lang, body[0])
			}
			a := authors[r.IntN(len(authors))]
			var lines []string
			if prev != nil && r.IntN(2) == 0 {
				if lang == "zh" {
					lines = append(lines, prev.first+"，你好：")
				} else {
					lines = append(lines, "Hi "+prev.first+",")
				}
			}
			lines = append(lines, textutil.Join(lang, body))
			if prev != nil && r.IntN(3) > 0 {
				if lang == "zh" {
					lines = append(lines, fmt.Sprintf("在 2026年%d月%d日，%s 写道：", 1+r.IntN(12), 1+r.IntN(28), prev.full))
				} else {
					lines = append(lines, fmt.Sprintf("On %s %d, 2026, %s wrote:", monthEN[r.IntN(12)], 1+r.IntN(28), prev.full))
				}
				for _, q := range prevBody[:min(len(prevBody), 1+r.IntN(2))] {
					lines = append(lines, "> "+q)
				}
			}
			content := utf8.RuneCountInString(strings.Join(lines, "\n"))
			lines = append(lines, a.signature...)
			lines = append(lines, list.footer...)
			title := subject
			if n > 0 {
				title = "Re: " + subject
			}
			id := idIn(fmt.Sprintf("%s.%d", key, n), split)
			out = append(out, corpus.Doc{ID: id, Source: "mail", Lang: lang, Topic: list.name, Title: "[" + list.name + "] " + title, Body: strings.Join(lines, "\n"), ContentChars: content})
			prev, prevBody = &a, body
		}
	}
	return out
}

// minBody is the shortest mail body in characters.
var minBody = map[string]int{"en": 40, "zh": 15}

var monthEN = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// subjectOf makes a subject line from a thread's first sentence.
func subjectOf(lang, s string) string {
	if lang == "zh" {
		rs := []rune(strings.TrimRight(s, "。！？；"))
		return string(rs[:min(len(rs), 14)])
	}
	w := strings.Fields(strings.TrimRight(s, ".!?"))
	return strings.Join(w[:min(len(w), 7)], " ")
}
