package main

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/scripts/eval/metrics"
	"github.com/simdex/simdex/scripts/eval/pairs"
	"github.com/simdex/simdex/scripts/eval/runner"
	"github.com/simdex/simdex/scripts/eval/spotsigs"
	"github.com/simdex/simdex/scripts/eval/whole"
)

// method explains the benchmark at the end of the report.
//
//go:embed method.md
var method string

func cmdRun(ctx context.Context, log *slog.Logger, args []string) (err error) {
	def := runner.DefaultConfig()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	in := fs.String("pairs", "", "pairs JSON Lines from `simdex-eval pairs` (required)")
	out := fs.String("out", "docs/QUALITY.md", "report to write")
	outcomes := fs.String("outcomes", "", "also write every pair's outcome as JSON Lines here (for tuning)")
	repo := fs.String("repo", ".", "module root holding cmd/server")
	bin := fs.String("server-bin", "", "use this server binary instead of building cmd/server")
	url := fs.String("url", "", "use the simdex service already running here (e.g. on HBase) instead of starting one; its index should hold nothing else")
	curveMax := fs.Int("curve-max", 12, "largest k of the offline curve")
	batch := fs.Int("batch", def.Batch, "items per batch request")
	command := fs.String("command", "", "command line to print in the report (default: this one)")
	wholeIn := fs.String("whole", "", "whole-corpus additions from `simdex-eval pairs -whole`: store them too, check the probes, and judge every hit against the whole stored corpus")
	contentOut := fs.String("content-hits", "", "with -whole, write every hit judged by content (not provenance), both texts whole, as JSON Lines here (for choosing thresholds and labelling)")
	peer := fs.Bool("spotsigs", false, "with -whole, also run the SpotSigs peer (scripts/eval/spotsigs) on the same stored documents and queries, judge its hits the same way and report it beside the service")
	wrongOut := fs.String("wrong-hits", "", "with -whole, write every wrong hit (ids, relations, both texts' first 300 characters) as JSON Lines here")
	sources := fs.Bool("sources", def.Sources, "send each text's source (a site, a list, a help module): stored documents carry it as their source attribute and checks name it; false for a server without per-source templates")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		return fmt.Errorf("run: -pairs is required")
	}
	f, err := os.Open(*in)
	if err != nil {
		return err
	}
	ps, err := pairs.Read(f)
	f.Close()
	if err != nil {
		return err
	}
	var set pairs.WholeSet
	if *wholeIn != "" {
		f, err := os.Open(*wholeIn)
		if err != nil {
			return err
		}
		set, err = pairs.ReadWhole(f)
		f.Close()
		if err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "simdex-eval-")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(tmp)) }()
	base := *url
	if base == "" {
		if *bin == "" {
			log.Info("building cmd/server")
			if *bin, err = runner.BuildServer(ctx, *repo, tmp); err != nil {
				return err
			}
		}
		srvLog, err := os.Create(filepath.Join(tmp, "server.log"))
		if err != nil {
			return err
		}
		defer srvLog.Close()
		srv, err := runner.Start(ctx, log, *bin, filepath.Join(tmp, "data"), 60*time.Second, srvLog)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, srv.Close()) }()
		base = srv.URL
	}
	cfg := def
	cfg.Batch, cfg.Logger, cfg.Sources = *batch, log, *sources
	start := time.Now()
	res, err := runner.EvaluateWhole(ctx, runner.NewClient(base, &http.Client{Timeout: 5 * time.Minute}), ps, set, cfg)
	if err != nil {
		return err
	}
	log.Info("evaluated", "pairs", len(ps), "stored", res.Stored, "k", res.K, "truncated", res.Truncated, "took", time.Since(start).Round(time.Millisecond))
	if *outcomes != "" {
		if err := writeOutcomes(*outcomes, res.Outcomes); err != nil {
			return err
		}
	}
	cmdline := *command
	if cmdline == "" {
		cmdline = "simdex-eval run " + strings.Join(args, " ")
	}
	meta := metrics.Meta{
		Command: cmdline, Machine: machine(), Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		Commit: commit(ctx, *repo, *out), Recipe: fmt.Sprint(fingerprint.RecipeVersion), DefaultK: res.K, CurveMax: *curveMax,
		Pairs: len(ps), Stored: res.Stored, Method: method,
		Notes: []string{fmt.Sprintf("Run time: %s for %d inserts and %d checks in batches of %d.", time.Since(start).Round(time.Second), res.Stored+res.Background, len(ps)+len(set.Probes), cfg.Batch), sourcesNote(cfg.Sources)},
	}
	if *wholeIn != "" {
		wc := newWholeCorpus(ps, set)
		rs := whole.Judge(wc.judge, wc.stored, wc.queries, serviceAnswers(ps, set, res))
		top, err := wholeSection(log, wc, rs, *wrongOut, *contentOut)
		if err != nil {
			return err
		}
		meta.Top = top
		if *peer {
			pr, err := runSpotSigs(log, spotsigs.DefaultConfig(), ps, wc)
			if err != nil {
				return err
			}
			meta.Top += pr.section(rs)
			meta.Peers = append(meta.Peers, pr.summary())
		}
	}
	if *url != "" {
		meta.Service = "the service at " + *url
	}
	if res.Truncated > 0 {
		meta.Notes = append(meta.Notes, fmt.Sprintf("%d checks returned more than %d hits and were cut; a partner cut off counts as missed.", res.Truncated, cfg.Limit))
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	w, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := metrics.WriteMarkdown(w, meta, res.Outcomes, metrics.Kinds{Order: pairs.Kinds(), Positive: pairs.IsPositive, Describe: pairs.Describe}); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	tot := metrics.Total(res.Outcomes, metrics.PartnerReturned)
	log.Info("report written", "out", *out, "precision", metrics.F(tot.Precision()), "recall", metrics.F(tot.Recall()), "f1", metrics.F(tot.F1()))
	return nil
}

func writeOutcomes(path string, os_ []metrics.Outcome) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	for _, o := range os_ {
		if err := enc.Encode(o); err != nil {
			f.Close()
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// machine describes this machine for the report.
func machine() string {
	s := fmt.Sprintf("%d cores, %s/%s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				if _, v, ok := strings.Cut(l, ":"); ok {
					s += ", " + strings.TrimSpace(v)
				}
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			s += fmt.Sprintf(", %.0f GiB RAM", float64(kb)/(1<<20))
		}
	}
	return s
}

// commit is the short git commit of repo, "-dirty" when tracked files
// other than the report have changes.
func commit(ctx context.Context, repo, report string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", repo, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown commit"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "-C", repo, "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)"+report).Output(); err == nil && len(st) > 0 {
		c += "-dirty"
	}
	return c
}

// sourcesNote says whether the run named the texts' sources.
func sourcesNote(sent bool) string {
	if sent {
		return "Sources: stored documents carry their source (a site, a mailing list, a help module or manual section; none for Brown texts, speeches and quotations) and checks name it (pairs.DocSource), so each source's template is learned."
	}
	return "Sources: not sent (-sources=false): templates are learned from the overall counts only."
}
