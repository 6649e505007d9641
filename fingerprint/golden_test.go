package fingerprint

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.json (and require a RecipeVersion bump when outputs change)")

const goldenPath = "testdata/golden.json"

type goldenFile struct {
	Recipe uint32            `json:"recipe"`
	Docs   map[string]Result `json:"docs"`
	// TextKeys are the documents' text keys (Result.Bands after the LSH
	// bands), pinned under their own version: the index records
	// TextKeysVersion, not RecipeVersion, for them.
	TextKeysVersion string              `json:"text_keys_version,omitempty"`
	TextKeys        map[string][]uint64 `json:"text_keys,omitempty"`
}

// goldenDocs are the documents whose fingerprints are pinned: every test
// text, plus markup and hint variants.
func goldenDocs(t *testing.T) map[string]Document {
	docs := map[string]Document{}
	for _, td := range loadTexts(t) {
		docs[td.name] = td.doc
	}
	docs["html_zh_museum"] = Document{
		Title: "<title>博物馆夜场</title>",
		Body: "<html><head><style>p{color:red}</style></head><body><nav>首页 | 新闻</nav>" +
			"<p>本月起，市博物馆在每周五和周六晚上延长开放至九点，同时推出<b>青铜器</b>特展和夜间讲解活动。</p>" +
			"<script>var x = '<p>not text</p>';</script><p>分享到：微信 微博</p><p>Copyright &copy; 2024 市博物馆</p></body></html>",
	}
	// A short title that the page's sentences use: only the headline line
	// goes (recipe 4).
	docs["headline_zh_delete"] = Document{
		Title: "删除",
		Body:  "删除 - 帮助中心\n从表格中删除选中的列。\n仅当光标位于表格中时，此命令才可用。\n选择「表格 - 删除 - 列」。\n删除列",
	}
	// A one-line reply quoting a mail above a signature: the quoted lines
	// go, the short body above the signature stays (recipe 4).
	docs["mail_reply_zh"] = Document{
		Title: "Re: 打印预览",
		Body:  "前一张幻灯片，无效果\n在 2026年8月2日，黄娜 写道：\n> 已有的日期字段的格式可以在任何时候进行修改。\n--\n黄娜\n技术文档工程师 | 深圳前海开源软件有限公司\n“温故而知新，可以为师矣。”",
	}
	docs["fullwidth_en"] = Document{Body: "ＴＨＥ　ＥＵＲＯＰＥＡＮ　ＣＥＮＴＲＡＬ　ＢＡＮＫ　ｒａｉｓｅｄ　ｉｎｔｅｒｅｓｔ　ｒａｔｅｓ", Lang: "en"}
	return docs
}

func TestGolden(t *testing.T) {
	f := testFP(t)
	got := goldenFile{Recipe: RecipeVersion, Docs: map[string]Result{}, TextKeysVersion: TextKeysVersion, TextKeys: map[string][]uint64{}}
	for name, d := range goldenDocs(t) {
		r := mustFP(t, f, d)
		// Text is the normalized body the other fields were computed from
		// (normalize_test.go pins normalization); not part of the file.
		if r.Text == "" || utf8.RuneCountInString(r.Text) != r.Chars || xxhash.Sum64String(r.Text) != r.ExactHash {
			t.Errorf("%s: Text of %d characters (hash %x) does not match Chars %d and ExactHash %x", name, utf8.RuneCountInString(r.Text), xxhash.Sum64String(r.Text), r.Chars, r.ExactHash)
		}
		r.Text = ""
		if k := r.Bands.TextKeys(); len(k) > 0 {
			got.TextKeys[name] = k
		}
		r.Bands = r.Bands.LSH()
		got.Docs[name] = r
	}

	var want goldenFile
	b, err := os.ReadFile(goldenPath)
	if err == nil {
		err = json.Unmarshal(b, &want)
	}
	if *update {
		if err == nil && want.Recipe == RecipeVersion && !reflect.DeepEqual(want.Docs, got.Docs) {
			t.Fatalf("outputs changed but RecipeVersion is still %d: bump it, then run -update again", RecipeVersion)
		}
		// Text keys are cut from the normalized body: a recipe change may
		// change them under the same TextKeysVersion (the index checks both).
		if err == nil && want.Recipe == RecipeVersion && want.TextKeysVersion == TextKeysVersion && !reflect.DeepEqual(want.TextKeys, got.TextKeys) {
			t.Fatalf("text keys changed but TextKeysVersion is still %q: bump it, then run -update again", TextKeysVersion)
		}
		out, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.FromSlash(goldenPath), append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatalf("read %s: %v (run go test -run TestGolden -update)", goldenPath, err)
	}
	if want.Recipe != RecipeVersion {
		t.Fatalf("%s is for recipe %d, code is recipe %d: run go test -run TestGolden -update", goldenPath, want.Recipe, RecipeVersion)
	}
	for name, g := range got.Docs {
		w, ok := want.Docs[name]
		if !ok {
			t.Errorf("%s: not in %s (run -update)", name, goldenPath)
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: fingerprint output changed under recipe %d:\n got %+v\nwant %+v\nIf the change is intended, bump RecipeVersion and run go test -run TestGolden -update.", name, RecipeVersion, g, w)
		}
	}
	if want.TextKeysVersion != TextKeysVersion {
		t.Fatalf("%s has text keys %q, code has %q: run go test -run TestGolden -update", goldenPath, want.TextKeysVersion, TextKeysVersion)
	}
	if !reflect.DeepEqual(got.TextKeys, want.TextKeys) {
		t.Errorf("text keys changed under %q:\n got %v\nwant %v\nIf the change is intended, bump TextKeysVersion and run go test -run TestGolden -update.", TextKeysVersion, got.TextKeys, want.TextKeys)
	}
	for name := range want.Docs {
		if _, ok := got.Docs[name]; !ok {
			t.Errorf("%s: in %s but no longer a golden document", name, goldenPath)
		}
	}
}
