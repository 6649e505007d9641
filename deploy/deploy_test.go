// Package deploy holds what operators install beside simdex servers: the
// Grafana dashboard (grafana/simdex.json) and the Prometheus alerting rules
// with their promtool unit tests (prometheus/). Its tests start the real
// server and check that everything these files query is a metric the server
// exposes; docs/OPERATIONS.md, "Dashboards and alerts", describes them.
package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/server"
)

const (
	dashboardFile = "grafana/simdex.json"
	rulesFile     = "prometheus/simdex-rules.yml"
	ruleTestsFile = "prometheus/simdex-rules.test.yml"
	operationsDoc = "../docs/OPERATIONS.md"
)

// notOnEmbeddedServer are the metric names the dashboard and rules may use
// although a server on the embedded store does not expose them, each with
// the source file that declares it (checked below); "" for names that come
// from Prometheus itself.
var notOnEmbeddedServer = map[string]string{
	// The HBase client's metrics (package hbase), registered on /metrics by
	// servers started with --store hbase.
	"hbase_client_rpc_duration_seconds":        "../hbase/metrics.go",
	"hbase_client_retries_total":               "../hbase/metrics.go",
	"hbase_client_region_cache_misses_total":   "../hbase/metrics.go",
	"hbase_client_open_connections":            "../hbase/metrics.go",
	"hbase_client_multi_coalesced_calls_total": "../hbase/metrics.go",
	// A counter vector whose series appear with the first failed store
	// call.
	"simdex_store_errors_total": "../kvindex/metrics.go",
	// Registered only by a server on an index whose writers take turns.
	"simdex_writer_lease_held":      "../internal/server/run.go",
	"simdex_writes_forwarded_total": "../internal/server/forward.go",
	// Prometheus's own per-target series.
	"up": "",
}

// TestMetricsExist starts the server on the embedded store, sends it a few
// requests of each kind, and checks that every metric the dashboard's
// queries, the alerting rules and the rules' unit tests name is on its
// /metrics page (or, for the names in notOnEmbeddedServer, declared where
// the list says), and that the dashboard shows every simdex and HBase client
// metric.
func TestMetricsExist(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server (loads the segmentation dictionaries)")
	}
	base := startServer(t)
	exercise(t, base)
	families := waitForMetrics(t, base, "simdex_compaction_runs_total")
	declared := checkAllowList(t)

	dash := loadDashboard(t)
	rules := loadRules(t)
	sources := map[string][]string{} // expression -> where it comes from
	for _, q := range dash.queries {
		sources[q.expr] = append(sources[q.expr], "dashboard: "+q.where)
	}
	for _, r := range rules {
		sources[r.expr] = append(sources[r.expr], rulesFile+": "+r.name)
	}
	for _, s := range loadTestSeries(t) {
		sources[s] = append(sources[s], ruleTestsFile+": input series")
	}
	used := map[string]bool{}
	for expr, where := range sources {
		for _, name := range metricNames(expr) {
			used[name] = true
			if _, ok := exposed(families, name); ok {
				continue
			}
			if declared[name] || declared[trimSeriesSuffix(name)] {
				continue
			}
			t.Errorf("%s: metric %s is not exposed by the server (query %q)", strings.Join(where, ", "), name, expr)
		}
	}

	// Every simdex and HBase client metric has a panel.
	inDashboard := map[string]bool{}
	for _, q := range dash.queries {
		for _, name := range metricNames(q.expr) {
			if fam, ok := exposed(families, name); ok {
				inDashboard[fam] = true
			} else {
				inDashboard[trimSeriesSuffix(name)] = true
			}
		}
	}
	var all []string
	for name := range families {
		all = append(all, name)
	}
	for name, src := range notOnEmbeddedServer {
		if src != "" {
			all = append(all, name)
		}
	}
	sort.Strings(all)
	for _, name := range all {
		if (strings.HasPrefix(name, "simdex_") || strings.HasPrefix(name, "hbase_client_")) && !inDashboard[name] {
			t.Errorf("metric %s has no panel in %s", name, dashboardFile)
		}
	}
	t.Logf("%d metric names used by the dashboard, rules and rule tests; %d families exposed", len(used), len(families))
}

// startServer runs server.Run (what cmd/server runs) on loopback with a
// fresh embedded store and a short compaction timer, and returns its base
// URL; the server stops when the test ends.
func startServer(t *testing.T) string {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.CompactEvery = 200 * time.Millisecond
	cfg.LogLevel = "warn"
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg, io.Discard, ready) }() // joined in Cleanup
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	select {
	case addr := <-ready:
		return "http://" + addr.String()
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("server did not start within 2 minutes")
	}
	return ""
}

// exercise sends requests of each kind, so that the metric vectors the
// dashboard reads have series: inserts stored and refused as duplicates,
// checks of each outcome, errors, deletes (tombstones for compaction), seen
// marks and filters.
func exercise(t *testing.T, base string) {
	t.Helper()
	text := "The city council approved a new budget on Tuesday that increases funding for public transport and parks, " +
		"after a long debate about taxes and spending priorities for the coming year."
	other := "Farmers in the valley expect a late harvest after the cold and wet weather of the last months. " +
		"Prices for apples and pears may rise at the markets before the winter holidays begin."
	for _, c := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v1/documents", `{"id":"d1","text":` + strconv.Quote(text) + `,"time":"2026-11-23T08:00:00Z","mode":"insert-if-unique"}`, 201},
		{"POST", "/v1/documents", `{"id":"d2","text":` + strconv.Quote(text) + `,"time":"2026-11-23T08:00:00Z","mode":"insert-if-unique"}`, 200},
		{"POST", "/v1/documents", `{"id":"d3","text":` + strconv.Quote(other) + `}`, 201},
		{"POST", "/v1/check", `{"text":` + strconv.Quote(text) + `}`, 200},
		{"POST", "/v1/check/batch", `{"items":[{"text":` + strconv.Quote(other) + `},{"fingerprint":"0123456789abcdef"}]}`, 200},
		{"POST", "/v1/check", `{"fingerprint":"zz"}`, 400},
		{"GET", "/v1/documents/d1", "", 200},
		{"GET", "/v1/documents/nope", "", 404},
		{"DELETE", "/v1/documents/d3", "", 204},
		{"POST", "/v1/users/u1/seen", `{"items":[{"id":"a17","doc_id":"d1"}]}`, 200},
		{"POST", "/v1/users/u1/seen/filter", `{"candidates":[{"id":"b9"},{"id":"a17"}],"near":true}`, 200},
		{"GET", "/v1/stats", "", 200},
		{"GET", "/readyz", "", 200},
	} {
		req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, resp.StatusCode, body, c.status)
		}
	}
}

// waitForMetrics reads /metrics until every family in want is there (e.g.
// the compaction timer has run), and returns the families by name with
// their type.
func waitForMetrics(t *testing.T, base string, want ...string) map[string]string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		fams := scrape(t, base)
		missing := slices.DeleteFunc(slices.Clone(want), func(n string) bool { _, ok := fams[n]; return ok })
		if len(missing) == 0 {
			return fams
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics still lacks %v after a minute", missing)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// scrape reads the text exposition format's TYPE lines.
func scrape(t *testing.T, base string) map[string]string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	fams := map[string]string{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			fams[f[2]] = f[3]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return fams
}

// exposed says whether a series name belongs to an exposed family (a
// histogram's _bucket, _sum and _count series, a summary's _sum and
// _count), and which.
func exposed(fams map[string]string, name string) (string, bool) {
	if _, ok := fams[name]; ok {
		return name, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		switch fams[base] {
		case "histogram":
			return base, true
		case "summary":
			if suffix != "_bucket" {
				return base, true
			}
		}
	}
	return "", false
}

func trimSeriesSuffix(name string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			return base
		}
	}
	return name
}

// checkAllowList checks notOnEmbeddedServer against the code: each name is
// declared (as a quoted metric name) in its source file, and the HBase
// client's names are registered by an hbase.Client (New does not contact
// the cluster) unless they are vectors without series yet. It returns the
// names so checked.
func checkAllowList(t *testing.T) map[string]bool {
	t.Helper()
	reg := prometheus.NewRegistry()
	c, err := hbase.New(hbase.Config{ZooKeeper: []string{"127.0.0.1:1"}, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	registered := map[string]bool{}
	for _, mf := range mfs {
		registered[mf.GetName()] = true
	}
	for name := range registered {
		if notOnEmbeddedServer[name] == "" {
			t.Errorf("the HBase client registers %s, which is missing from notOnEmbeddedServer", name)
		}
	}
	declared := map[string]bool{}
	for name, src := range notOnEmbeddedServer {
		if src == "" {
			declared[name] = true
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), strconv.Quote(name)) {
			t.Errorf("%s does not declare metric %s (notOnEmbeddedServer)", src, name)
			continue
		}
		if strings.HasPrefix(name, "hbase_client_") && !registered[name] && !regexp.MustCompile(`(?s)NewCounterVec\(prometheus\.CounterOpts\{\s*Name:\s*`+regexp.QuoteMeta(strconv.Quote(name))).Match(b) {
			t.Errorf("the HBase client does not register %s", name)
			continue
		}
		declared[name] = true
	}
	return declared
}

// dashboard is what the test reads of the Grafana dashboard.
type dashboard struct {
	queries []query
}

type query struct{ where, expr string }

type panel struct {
	ID         int             `json:"id"`
	Type       string          `json:"type"`
	Title      string          `json:"title"`
	Datasource json.RawMessage `json:"datasource"`
	GridPos    *struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		RefID      string          `json:"refId"`
		Expr       string          `json:"expr"`
		Datasource json.RawMessage `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

// loadDashboard reads the dashboard and checks its shape: a current schema
// version, a Prometheus data source variable that every panel and query
// uses (no data source or instance written in), unique panel ids, a query
// in every panel but rows.
func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		UID           string  `json:"uid"`
		Title         string  `json:"title"`
		SchemaVersion int     `json:"schemaVersion"`
		Panels        []panel `json:"panels"`
		Templating    struct {
			List []struct {
				Type       string          `json:"type"`
				Name       string          `json:"name"`
				Query      json.RawMessage `json:"query"`
				Datasource json.RawMessage `json:"datasource"`
				Definition string          `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if raw.UID == "" || raw.Title == "" {
		t.Errorf("%s: uid %q, title %q: want both", dashboardFile, raw.UID, raw.Title)
	}
	if raw.SchemaVersion < 39 {
		t.Errorf("%s: schemaVersion %d, want that of a current Grafana (39 or later)", dashboardFile, raw.SchemaVersion)
	}
	const dsRef = `{"type":"prometheus","uid":"${datasource}"}`
	sameDS := func(m json.RawMessage) bool {
		var v, want any
		return json.Unmarshal(m, &v) == nil && json.Unmarshal([]byte(dsRef), &want) == nil && fmt.Sprint(v) == fmt.Sprint(want)
	}
	var d dashboard
	vars := map[string]bool{}
	for _, v := range raw.Templating.List {
		vars[v.Name] = true
		switch v.Type {
		case "datasource":
			if v.Name != "datasource" || string(v.Query) != `"prometheus"` {
				t.Errorf("%s: data source variable %q queries %s, want $datasource of type prometheus", dashboardFile, v.Name, v.Query)
			}
		case "query":
			if !sameDS(v.Datasource) {
				t.Errorf("%s: variable %s: data source %s, want %s", dashboardFile, v.Name, v.Datasource, dsRef)
			}
			// label_values(series, label): the label is no metric.
			m := regexp.MustCompile(`^label_values\((.+),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$`).FindStringSubmatch(v.Definition)
			if m == nil {
				t.Errorf("%s: variable %s: query %q, want label_values(series, label)", dashboardFile, v.Name, v.Definition)
				continue
			}
			d.queries = append(d.queries, query{"variable " + v.Name, m[1]})
		}
	}
	if !vars["datasource"] {
		t.Errorf("%s: no data source variable", dashboardFile)
	}
	ids := map[int]string{}
	instanceLiteral := regexp.MustCompile(`instance\s*=~?\s*"[^"$]`)
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if prev, dup := ids[p.ID]; dup || p.ID == 0 {
				t.Errorf("%s: panel %q: id %d (also %q); want unique non-zero ids", dashboardFile, p.Title, p.ID, prev)
			}
			ids[p.ID] = p.Title
			if p.GridPos == nil || p.GridPos.W == 0 || p.GridPos.H == 0 || p.GridPos.X+p.GridPos.W > 24 {
				t.Errorf("%s: panel %q: bad gridPos %+v", dashboardFile, p.Title, p.GridPos)
			}
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if !sameDS(p.Datasource) {
				t.Errorf("%s: panel %q: data source %s, want %s", dashboardFile, p.Title, p.Datasource, dsRef)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: panel %q has no query", dashboardFile, p.Title)
			}
			for _, tg := range p.Targets {
				where := fmt.Sprintf("panel %q, query %s", p.Title, tg.RefID)
				if tg.Expr == "" {
					t.Errorf("%s: %s: empty expression", dashboardFile, where)
				}
				if tg.Datasource != nil && !sameDS(tg.Datasource) {
					t.Errorf("%s: %s: data source %s, want %s", dashboardFile, where, tg.Datasource, dsRef)
				}
				if instanceLiteral.MatchString(tg.Expr) {
					t.Errorf("%s: %s selects an instance by name: %s", dashboardFile, where, tg.Expr)
				}
				d.queries = append(d.queries, query{where, tg.Expr})
			}
		}
	}
	walk(raw.Panels)
	if len(d.queries) == 0 {
		t.Fatalf("%s: no queries", dashboardFile)
	}
	return d
}

// rule is one alerting rule as the test reads it.
type rule struct {
	name, expr  string
	labels      map[string]string
	annotations map[string]string
}

// loadRules reads the alerting rules. It understands the layout of
// simdex-rules.yml (one `- alert:` item per rule; expr on its line or as a
// `|` block; labels and annotations as one-line `key: value` maps), which
// promtool checks as YAML; a rule it cannot read fails the test.
func loadRules(t *testing.T) []rule {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	indent := func(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }
	var rules []rule
	var cur *rule
	section := ""
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if name, ok := strings.CutPrefix(trimmed, "- alert: "); ok {
			rules = append(rules, rule{name: name, labels: map[string]string{}, annotations: map[string]string{}})
			cur, section = &rules[len(rules)-1], ""
			continue
		}
		if cur == nil {
			continue
		}
		key, val, ok := strings.Cut(trimmed, ":")
		if !ok {
			t.Fatalf("%s:%d: cannot read %q", rulesFile, i+1, line)
		}
		val = strings.TrimSpace(val)
		switch {
		case key == "expr" && val == "|":
			var block []string
			for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || indent(lines[i+1]) > indent(line)) {
				i++
				block = append(block, strings.TrimSpace(lines[i]))
			}
			cur.expr, section = strings.TrimSpace(strings.Join(block, "\n")), ""
		case key == "expr":
			cur.expr, section = val, ""
		case key == "labels" || key == "annotations":
			section = key
		case key == "for":
			section = ""
		case section != "":
			if strings.HasPrefix(val, `"`) {
				if val, err = strconv.Unquote(val); err != nil {
					t.Fatalf("%s:%d: %v", rulesFile, i+1, err)
				}
			}
			if section == "labels" {
				cur.labels[key] = val
			} else {
				cur.annotations[key] = val
			}
		}
	}
	if n := strings.Count(string(b), "- alert: "); n != len(rules) || n == 0 {
		t.Fatalf("%s: read %d rules of %d", rulesFile, len(rules), n)
	}
	return rules
}

// TestRules checks what promtool does not: every alert has a severity,
// a summary, a description and a runbook_url naming a heading of
// docs/OPERATIONS.md, and a unit test in simdex-rules.test.yml.
func TestRules(t *testing.T) {
	doc, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "#") {
			anchors[slug(strings.TrimLeft(line, "# "))] = true
		}
	}
	tests, err := os.ReadFile(ruleTestsFile)
	if err != nil {
		t.Fatal(err)
	}
	tested := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*alertname:\s*(\S+)\s*$`).FindAllStringSubmatch(string(tests), -1) {
		tested[m[1]] = true
	}
	names := map[string]bool{}
	for _, r := range loadRules(t) {
		if names[r.name] {
			t.Errorf("alert %s defined twice", r.name)
		}
		names[r.name] = true
		if r.expr == "" {
			t.Errorf("alert %s: no expr", r.name)
		}
		if s := r.labels["severity"]; s != "critical" && s != "warning" {
			t.Errorf("alert %s: severity %q, want critical or warning", r.name, s)
		}
		for _, a := range []string{"summary", "description", "runbook_url"} {
			if r.annotations[a] == "" {
				t.Errorf("alert %s: no %s annotation", r.name, a)
			}
		}
		if u := r.annotations["runbook_url"]; u != "" {
			file, anchor, _ := strings.Cut(u, "#")
			if file != "docs/OPERATIONS.md" || !anchors[anchor] {
				t.Errorf("alert %s: runbook_url %q names no heading of docs/OPERATIONS.md", r.name, u)
			}
		}
		if !tested[r.name] {
			t.Errorf("alert %s has no test in %s", r.name, ruleTestsFile)
		}
	}
	for name := range tested {
		if !names[name] {
			t.Errorf("%s tests alert %s, which %s does not define", ruleTestsFile, name, rulesFile)
		}
	}
}

// slug is the anchor GitHub gives a Markdown heading.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// loadTestSeries returns the input series of the rules' unit tests.
func loadTestSeries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(ruleTestsFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^\s*- series:\s*'([^']*)'`).FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatalf("%s: no input series", ruleTestsFile)
	}
	return out
}

// promqlWords are PromQL's keywords, which read like metric names.
var promqlWords = map[string]bool{
	"and": true, "or": true, "unless": true, "by": true, "without": true, "on": true, "ignoring": true,
	"group_left": true, "group_right": true, "bool": true, "offset": true, "inf": true, "nan": true,
	"atan2": true, "start": true, "end": true,
}

// metricNames returns the metric names a PromQL expression (or a Grafana
// label_values query) selects: identifiers outside strings, label
// matchers, ranges and grouping lists that are neither keywords nor
// function names. Grafana's $variables are not names.
func metricNames(expr string) []string {
	var names []string
	seen := map[string]bool{}
	isIdentStart := func(c byte) bool { return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isIdent := func(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }
	skipTo := func(i int, close byte) int { // index after the matching close
		for depth := 0; i < len(expr); i++ {
			switch c := expr[i]; {
			case c == '"' || c == '\'' || c == '`':
				j := strings.IndexByte(expr[i+1:], c)
				if j < 0 {
					return len(expr)
				}
				i += j + 1
			case c == '(' && close == ')', c == '{' && close == '}', c == '[' && close == ']':
				depth++
			case c == close:
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(expr)
	}
	nextNonSpace := func(i int) int {
		for i < len(expr) && (expr[i] == ' ' || expr[i] == '\t' || expr[i] == '\n') {
			i++
		}
		return i
	}
	// isAggregation says whether a grouping clause and then a call start
	// at k: the "sum by (le) (" of an aggregation.
	isAggregation := func(k int) bool {
		for _, kw := range []string{"by", "without"} {
			rest := strings.ToLower(expr[k:])
			if !strings.HasPrefix(rest, kw) || len(rest) > len(kw) && isIdent(rest[len(kw)]) {
				continue
			}
			k = nextNonSpace(k + len(kw))
			if k < len(expr) && expr[k] == '(' {
				k = nextNonSpace(skipTo(k, ')'))
			}
			return k < len(expr) && expr[k] == '('
		}
		return false
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if j := strings.IndexByte(expr[i+1:], c); j >= 0 {
				i += j + 2
			} else {
				i = len(expr)
			}
		case c == '{':
			i = skipTo(i, '}')
		case c == '[':
			i = skipTo(i, ']')
		case c == '$':
			i++
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '{' || expr[i] == '}') {
				i++
			}
		case c >= '0' && c <= '9' || c == '.':
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '.') {
				i++
			}
		case isIdentStart(c):
			j := i
			for j < len(expr) && isIdent(expr[j]) {
				j++
			}
			word := expr[i:j]
			k := nextNonSpace(j)
			switch lw := strings.ToLower(word); {
			case lw == "by" || lw == "without" || lw == "on" || lw == "ignoring" || lw == "group_left" || lw == "group_right":
				if k < len(expr) && expr[k] == '(' {
					k = skipTo(k, ')')
				}
				j = k
			case promqlWords[lw]:
			case k < len(expr) && expr[k] == '(', isAggregation(k):
				// a function, or an aggregation with its grouping first
			default:
				if !seen[word] {
					seen[word] = true
					names = append(names, word)
				}
			}
			i = j
		default:
			i++
		}
	}
	return names
}

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{job=~"$job", route=~"/v1/.+"}[$__rate_interval])))`, []string{"a_bucket"}},
		{`sum by (job) (increase(b_total[26h])) > 0 unless on (job) sum by (job) (c) and on(job) max by (job) (time() - d) > 26 * 3600`, []string{"b_total", "c", "d"}},
		{`up{job="simdex"} == 0`, []string{"up"}},
		{`f{quantile="1"} offset 5m / ignoring(code) group_left g`, []string{"f", "g"}},
		{`h{a="x(y) unless z"}`, []string{"h"}},
		{`1e3 * i`, []string{"i"}},
	} {
		if got := metricNames(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("metricNames(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}
