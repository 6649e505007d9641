package pairs

import (
	"strings"
	"unicode/utf8"
)

// simpTrad lists simplified/traditional character pairs (simplified
// first) for the script-variant edit: a few hundred of the most frequent
// characters that differ between the scripts, enough to turn a
// simplified page into what a Taiwan or Hong Kong mirror serves. Pairs
// whose simplified character is already listed are ignored.
const simpTrad = "这這个個们們来來说說时時为為国國会會对對经經发發动動员員后後过過还還进進样樣么麼没沒问問题題" +
	"头頭东東车車门門见見长長开開关關书書业業务務应應该該实實现現认認识識让讓话話请請语語设設计計" +
	"机機网網络絡电電脑腦软軟选選择擇项項单單击擊显顯图圖标標页頁编編辑輯复複删刪视視数數据據库庫" +
	"报報区區记記录錄条條类類处處码碼级級组組织織线線体體义義边邊导導览覽构構统統帐帳户戶读讀写寫" +
	"缩縮档檔护護钮鈕键鍵盘盤栏欄换換调調节節点點钟鐘间間与與将將从從两兩无無际際产產资資质質变變" +
	"压壓饭飯馆館钱錢银銀层層岁歲华華历歷传傳权權战戰争爭总總议議举舉农農劳勞济濟贸貿税稅财財军軍" +
	"队隊卫衛罗羅马馬鱼魚鸟鳥龙龍广廣场場汉漢词詞汇匯术術艺藝乐樂团團运運输輸铁鐵飞飛齐齊办辦确確" +
	"错錯误誤获獲给給结結仅僅备備环環状狀态態块塊链鏈缓緩冲衝虑慮访訪尽盡帮幫维維难難众眾号號宽寬" +
	"轴軸签籤优優势勢当當阶階规規则則范範围圍隐隱双雙转轉闭閉启啟动動窗窗标標准準时時钮鈕则則" +
	"们們这這样樣种種类類于於并並师師学學习習众眾亲親热熱爱愛觉覺听聽气氣车車门門问問间間闻聞" +
	"儿兒几幾卖賣买買读讀谁誰谈談论論证證认認访訪评評试試询詢详詳说說请請诉訴译譯调調谢謝" +
	"页頁顺順须須顾顧预預领領频頻颜顏题題风風馆館验驗鲜鮮黄黃齿齒龄齡压壓厅廳历歷县縣发發"

// s2t maps simplified to traditional characters.
var s2t = func() map[rune]rune {
	m := map[rune]rune{}
	rs := []rune(simpTrad)
	for i := 0; i+1 < len(rs); i += 2 {
		if _, ok := m[rs[i]]; !ok && rs[i] != rs[i+1] {
			m[rs[i]] = rs[i+1]
		}
	}
	return m
}()

// t2s maps the traditional characters of s2t back to simplified ones.
var t2s = func() map[rune]rune {
	m := make(map[rune]rune, len(s2t))
	for s, t := range s2t {
		m[t] = s
	}
	return m
}()

// FoldTraditional turns the traditional characters the script-variant
// edit writes back into simplified ones, so a judge of text content reads
// a traditional copy as the text it was made from.
func FoldTraditional(s string) string {
	return strings.Map(func(r rune) rune {
		if x, ok := t2s[r]; ok {
			return x
		}
		return r
	}, s)
}

// toTraditional converts the characters s2t knows and returns how many it
// changed.
func toTraditional(s string) (string, int) {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if t, ok := s2t[r]; ok {
			r = t
			n++
		}
		b.WriteRune(r)
	}
	return b.String(), n
}

// toFullWidth turns printable ASCII (letters, digits, punctuation; not
// the space) into the full-width forms U+FF01..U+FF5E, as East Asian
// sites and input methods produce. pick is asked at the start of every
// line whether to convert that line, so a page can be partly full-width.
func toFullWidth(s string, pick func() bool) (string, int) {
	var b strings.Builder
	n := 0
	on := pick()
	for _, r := range s {
		if r == ' ' || r == '\n' {
			if r == '\n' {
				on = pick()
			}
			b.WriteRune(r)
			continue
		}
		if on && r > 0x20 && r < 0x7f {
			r += 0xFF01 - 0x21
			n++
		}
		b.WriteRune(r)
	}
	return b.String(), n
}

// synonymsEN and synonymsZH drive the "reworded sentence" edit: the
// replacement keeps the meaning, as a copy editor or a rewriting bot does.
var synonymsEN = map[string]string{
	"said": "stated", "big": "large", "large": "big", "help": "assist", "buy": "purchase", "show": "display",
	"start": "begin", "begin": "start", "end": "finish", "use": "employ", "get": "obtain", "many": "numerous",
	"important": "significant", "country": "nation", "nation": "country", "people": "citizens",
	"government": "administration", "increase": "rise", "new": "fresh", "also": "additionally",
	"however": "nevertheless", "because": "since", "about": "around", "very": "extremely", "small": "little",
	"make": "create", "made": "created", "told": "informed", "asked": "requested", "went": "traveled",
	"city": "town", "children": "kids", "house": "home", "job": "position", "work": "labor", "quickly": "rapidly",
	"must": "should", "think": "believe", "believe": "think", "great": "major", "year": "twelvemonth",
	"select": "choose", "choose": "select", "click": "press", "window": "dialog", "file": "document",
}

var synonymsZH = map[string]string{
	"例如": "比如", "可以": "能够", "使用": "利用", "选择": "选取", "如果": "假如", "显示": "展示", "文档": "文件",
	"单击": "点击", "设置": "设定", "打开": "开启", "关闭": "关上", "需要": "需", "所有": "全部", "如何": "怎样",
	"然后": "随后", "已经": "已", "因为": "由于", "但是": "不过", "立即": "马上", "修改": "更改", "删除": "移除",
	"输入": "键入", "创建": "新建", "当前": "目前", "指定": "设定", "包含": "包括", "自动": "自行", "快速": "迅速",
}

// runeLen is utf8.RuneCountInString, short.
func runeLen(s string) int { return utf8.RuneCountInString(s) }
