package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browserEnv names the variable that makes the browser test fail, instead
// of skip, when no Chromium is found (scripts/test.sh sets it).
const browserEnv = "SIMDEX_BROWSER_TEST"

// chromiumPath finds the browser: $SIMDEX_CHROMIUM, else chromium on PATH.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SIMDEX_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium found (set SIMDEX_CHROMIUM, or install Debian's chromium: apt-get install chromium; scripts/test.sh installs it)"
	if os.Getenv(browserEnv) == "require" {
		t.Fatalf("%s=require: %s", browserEnv, msg)
	}
	t.Skip(msg)
	return ""
}

// screenshotDir is where the browser test leaves its screenshots:
// $SIMDEX_SCREENSHOTS, else a new directory under the system's temporary
// directory (kept after the test, for a person to look at).
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SIMDEX_SCREENSHOTS")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "simdex-screenshots-"); err != nil {
			t.Fatal(err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots of the editor's page: %s", dir)
	return dir
}

// realServer starts the service as cmd/server does (Run), on loopback with
// an embedded store in a temporary directory and an API key, and returns
// its base URL; it is stopped when the test ends.
func realServer(t *testing.T, key string) string {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.APIKeys = []string{key}
	cfg.LogLevel = "warn"
	s := startRun(t, cfg)
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return s.base
}

// browserPage drives one tab of headless Chromium.
type browserPage struct {
	t     *testing.T
	ctx   context.Context
	shots string
	mu    sync.Mutex // guards errs
	errs  []string   // uncaught exceptions and console errors of the page
}

func (p *browserPage) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.fail(what, err)
	}
}

// waitFor waits until the JavaScript expression is truthy.
func (p *browserPage) waitFor(what, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 40*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		p.fail(what, err)
	}
}

func (p *browserPage) fail(what string, err error) {
	p.t.Helper()
	status, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.getElementById("status").textContent`))
	p.shot("failed")
	p.t.Fatalf("%s: %v (the page's status line: %q; page errors: %q)", what, err, status, p.pageErrors())
}

func (p *browserPage) pageErrors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errs...)
}

// shot writes a full-page screenshot.
func (p *browserPage) shot(name string) {
	p.t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(p.shots, name+".png"), png, 0o644); err != nil {
		p.t.Error(err)
	}
}

func evalJS[T any](p *browserPage, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.fail("evaluating "+expr, err)
	}
	return v
}

// setInput gives an input or text area a value, as pasting does.
func setInput(sel, value string) chromedp.Action[chromedp.Void] {
	v, _ := json.Marshal(value)
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		got, err := chromedp.Evaluate[string](fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %s; e.dispatchEvent(new Event("input", {bubbles: true})); return e.value; })()`, sel, v))(ctx, t)
		if err == nil && got != value {
			err = fmt.Errorf("%s holds %q after setting %q", sel, got, value)
		}
		return chromedp.Void{}, err
	}
}

func click(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }

// segText is a JavaScript expression: the texts of the marked segments
// matching sel, joined by "|".
func segText(sel string) string {
	return fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map((e) => e.textContent).join("|")`, sel)
}

// TestEditorPageInChromium drives the editor's page in headless Chromium
// against the real server (Run, embedded store in a temporary directory,
// an API key): a pasted English text finds its stored original and the
// page marks the typo, the changed number and the added sentence on both
// texts as the rule's alignment reads them; a Chinese text likewise; a
// mail's list footer is marked as template; storing asks for the API key
// and stores, insert-if-unique refuses a near-duplicate and names it; a
// looked-up document is shown and deleted; the overview shows the
// index's counts, rates, store and a user's seen set. Screenshots of each
// view go to $SIMDEX_SCREENSHOTS or a temporary directory (logged).
func TestEditorPageInChromium(t *testing.T) {
	chrome := chromiumPath(t)
	if testing.Short() {
		t.Skip("starts a browser")
	}
	const key = "editor-test-key-0123456789"
	base := realServer(t, key)
	shots := screenshotDir(t)

	en := "The city council approved the new budget of 4.5 million dollars on Monday. The vote was close, and the mayor thanked the members of the finance committee for their work."
	zh := "市政府周一批准了新的预算，总额为四百五十万元。投票结果非常接近，市长感谢财政委员会成员的工作。"
	seed := map[string]string{"news/budget": en, "news/zh-budget": zh}
	for i, b := range explainBodies {
		seed[fmt.Sprintf("mail/%d", i)] = explainMail(b)
	}
	var long strings.Builder
	for i := 0; long.Len() < 6000; i++ {
		fmt.Fprintf(&long, "Paragraph %d of the long report describes the harbour works in the district number %d. ", i, i*7)
	}
	seed["news/long"] = long.String()
	for id, text := range seed {
		if st, body := apiCall(t, base, key, "POST", "/v1/documents", map[string]any{"id": id, "text": text}); st != http.StatusCreated {
			t.Fatalf("seeding %s: %d %s", id, st, body)
		}
	}
	if st, body := apiCall(t, base, key, "POST", "/v1/users/reader-1/seen", map[string]any{"items": []map[string]any{{"id": "a1", "doc_id": "news/budget"}, {"id": "a2"}}}); st/100 != 2 {
		t.Fatalf("marking seen items: %d %s", st, body)
	}

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	p := &browserPage{t: t, ctx: ctx, shots: shots}
	if err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				msg = "console.error"
				for _, a := range e.Args {
					msg += " " + string(a.Value)
				}
			}
		}
		if msg != "" {
			p.mu.Lock()
			p.errs = append(p.errs, msg)
			p.mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("starting Chromium (%s): %v", chrome, err)
	}

	// The editor: paste an edited copy of the stored English article.
	p.do("opening the page", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#text")))
	if cs := evalJS[string](p, `document.characterSet`); cs != "UTF-8" {
		t.Errorf("the page's character set is %q", cs)
	}
	query := strings.NewReplacer("approved", "aproved", "4.5", "5.2").Replace(en) + " More details will follow on Friday."
	p.do("pasting the English text", setInput("#title", "Council passes budget"), setInput("#text", query), click("#check-btn"))
	p.waitFor("the check and its comparison", `document.querySelector('#duplicates-table tr[data-id="news/budget"]') && document.querySelector("#query-text .seg.c-typo")`)
	if got := evalJS[string](p, `document.querySelector('#duplicates-table tr[data-id="news/budget"] td:nth-child(2)').textContent`); got != "near_identical" {
		t.Errorf("the duplicate's relation: %q", got)
	}
	for sel, want := range map[string]string{
		"#query-text .seg.changed.c-typo":    "aproved",
		"#stored-text .seg.changed.c-typo":   "approved",
		"#query-text .seg.changed.c-number":  "5.2",
		"#stored-text .seg.changed.c-number": "4.5",
		"#query-text .seg.only.c-sentences":  "more details will follow on friday",
		"#stored-text .seg.only":             "",
		"#query-text .seg.c-content":         "",
	} {
		if got := evalJS[string](p, segText(sel)); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if got := evalJS[string](p, `document.getElementById("compare-relation").textContent`); got != "near_identical" {
		t.Errorf("the comparison's relation: %q", got)
	}
	if n := evalJS[int](p, `document.querySelectorAll("#stored-text .seg.same").length`); n == 0 {
		t.Error("no common passage marked on the stored text")
	}
	p.shot("1-check-english")

	// A Chinese text: one wrong character.
	zhQuery := strings.Replace(zh, "预算", "预箅", 1)
	p.do("pasting the Chinese text", setInput("#title", "预算"), setInput("#text", zhQuery), click("#check-btn"))
	p.waitFor("the Chinese comparison", `(document.querySelector("#query-text .seg.c-typo") || {}).textContent === "箅"`)
	if got := evalJS[string](p, segText("#stored-text .seg.c-typo")); got != "算" {
		t.Errorf("the stored Chinese text's typo mark: %q", got)
	}
	if got := evalJS[string](p, `document.getElementById("stored-text").textContent`); !strings.Contains(got, "市政府周一批准了新的预算") {
		t.Errorf("the stored Chinese text reads %q", got)
	}
	if ff := evalJS[string](p, `getComputedStyle(document.getElementById("query-text")).fontFamily`); !strings.Contains(ff, "Noto Sans CJK SC") {
		t.Errorf("the text's font stack names no Chinese face: %s", ff)
	}
	p.shot("2-check-chinese")

	// A mail: the list footer many stored mails share is template.
	p.do("pasting a mail", setInput("#title", ""), setInput("#text", "Re: "+explainMail(explainBodies[2])), click("#check-btn"))
	p.waitFor("the mail's comparison", `document.querySelector("#check-template li") && document.querySelector("#query-text .seg.template") && document.querySelector("#stored-text .seg.template")`)
	if got := evalJS[string](p, segText("#query-text .seg.template")); !strings.Contains(got, "to unsubscribe from this list") {
		t.Errorf("template marks of the query: %q", got)
	}
	p.shot("3-check-template")

	// Store a new article: the server asks for the key.
	fresh := "A new bakery opened on the harbour street on Saturday and sold out of bread before noon, the owner said, and she plans a second oven."
	p.do("storing a new article", setInput("#title", "Bakery"), setInput("#text", fresh), setInput("#doc-id", "news/bakery"), click("#store-btn"))
	p.waitFor("the key dialog", `document.getElementById("key-dialog").open`)
	p.shot("4-key-dialog")
	p.do("giving the key", setInput("#key-input", key), click("#key-ok"))
	p.waitFor("the stored article", `(document.querySelector("#store-result .badge") || {}).textContent === "stored"`)
	if st, body := apiCall(t, base, key, "GET", "/v1/documents/news/bakery", nil); st != http.StatusOK {
		t.Fatalf("the stored article: %d %s", st, body)
	}
	if got := evalJS[string](p, `document.getElementById("key-label").textContent`); got != "API key set" {
		t.Errorf("key status: %q", got)
	}
	p.shot("5-stored")

	// Store only if new: the edited copy is refused and its original named.
	p.do("storing a near-duplicate", setInput("#title", ""), setInput("#text", query), setInput("#doc-id", "news/budget-copy"), click("#store-btn"))
	p.waitFor("the refused near-duplicate", `(document.querySelector("#store-result .badge") || {}).textContent === "not stored"`)
	if got := evalJS[string](p, `document.getElementById("store-result").textContent`); !strings.Contains(got, "a duplicate of news/budget") {
		t.Errorf("the refusal reads %q", got)
	}
	if st, _ := apiCall(t, base, key, "GET", "/v1/documents/news/budget-copy", nil); st != http.StatusNotFound {
		t.Errorf("insert-if-unique stored a near-duplicate: %d", st)
	}

	// Look up the new article and delete it.
	p.do("looking up", setInput("#lookup-id", "news/bakery"), click("#lookup-btn"))
	p.waitFor("the looked-up article", `document.getElementById("lookup-text") && document.getElementById("check-result").childElementCount === 0`)
	if got := evalJS[string](p, `document.getElementById("lookup-text").textContent`); !strings.Contains(got, "a new bakery opened on the harbour street") {
		t.Errorf("the stored text reads %q", got)
	}
	p.shot("6-lookup")
	p.do("deleting", click("#delete-btn"))
	p.waitFor("the armed delete button", `document.getElementById("delete-btn").classList.contains("armed")`)
	p.do("confirming the delete", click("#delete-btn"))
	p.waitFor("the deletion", `document.getElementById("delete-result")`)
	if st, _ := apiCall(t, base, key, "GET", "/v1/documents/news/bakery", nil); st != http.StatusNotFound {
		t.Errorf("the deleted article answers %d", st)
	}
	// A long stored document keeps no text: the page says so.
	p.do("looking up a long document", setInput("#lookup-id", "news/long"), click("#lookup-btn"))
	p.waitFor("the long document", `document.getElementById("lookup-note")`)
	if got := evalJS[string](p, `document.getElementById("lookup-note").textContent`); !strings.Contains(got, "not available") || !strings.Contains(got, "4000") {
		t.Errorf("the long document's note reads %q", got)
	}

	// The overview: counts, rates, layout, store, fullest rows, a seen set.
	var stats statsResponse
	if st, body := apiCall(t, base, key, "GET", "/v1/stats", nil); st != http.StatusOK {
		t.Fatalf("stats: %d %s", st, body)
	} else if err := json.Unmarshal(body, &stats); err != nil {
		t.Fatal(err)
	}
	p.do("opening the overview", click("#tab-overview"))
	p.waitFor("the overview's cards", `document.querySelector("#card-documents .v") && document.querySelector("#fullest-rows tbody tr")`)
	if got := evalJS[string](p, `document.querySelector("#card-documents .v").textContent`); got != fmt.Sprint(stats.Documents) {
		t.Errorf("documents card %q, stats %d", got, stats.Documents)
	}
	if got := evalJS[string](p, `document.querySelector("#card-store .v").textContent`); got != "pebble" {
		t.Errorf("store card %q", got)
	}
	p.waitFor("the rates", `/\/s$/.test(document.querySelector("#card-checks .v").textContent)`)
	if got := evalJS[string](p, `document.querySelector("#card-checks .s").textContent`); strings.HasPrefix(got, "0 ") {
		t.Errorf("check requests: %q", got)
	}
	if n := evalJS[int](p, `document.querySelectorAll("#fullest-rows tbody tr").length`); n != min(10, len(stats.FullestRows)) {
		t.Errorf("%d fullest rows shown, stats has %d", n, len(stats.FullestRows))
	}
	p.do("a user's seen set", setInput("#seen-user", "reader-1"), click("#seen-summary-btn"))
	p.waitFor("the seen summary", `document.getElementById("seen-summary")`)
	if got := evalJS[string](p, `document.querySelector("#seen-summary dd:nth-of-type(2)").textContent`); got != "2" {
		t.Errorf("items seen: %q", got)
	}
	p.shot("7-overview")
	p.do("checking seen ids", setInput("#seen-ids", "a1\nzz"), click("#seen-check-btn"))
	p.waitFor("the seen check", `document.getElementById("seen-table")`)
	if got := evalJS[string](p, `Array.from(document.querySelectorAll("#seen-table td:nth-child(2)")).map((e) => e.textContent).join(",")`); got != "seen,not seen" {
		t.Errorf("seen check: %q", got)
	}

	// Everything the page loaded came from the server itself.
	if other := evalJS[[]string](p, fmt.Sprintf(`performance.getEntriesByType("resource").map((e) => e.name).filter((n) => !n.startsWith(%q))`, base+"/")); len(other) > 0 {
		t.Errorf("the page loaded from elsewhere: %q", other)
	}
	if errs := p.pageErrors(); len(errs) > 0 {
		t.Errorf("page errors: %q", errs)
	}
}
