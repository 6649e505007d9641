package ctl

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/schema"
)

var schemaVerb = Verb{
	Name:    "schema",
	Usage:   "create|verify|describe|drop --yes|plan [--hbase-zk Q] [--hbase-namespace NS] [--retention D] [--compression C] [--layout-b B --layout-k K] [--index-regions N] [--fingerprints N --insert-rate R]",
	Summary: "create, verify, describe or drop simdex's HBase tables; plan their size",
	Run:     runSchema,
}

func runSchema(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "schema")
	zk := fs.String("hbase-zk", os.Getenv("SIMDEX_HBASE_ZK"), "HBase ZooKeeper quorum host:port[,host:port...] (SIMDEX_HBASE_ZK)")
	ns := fs.String("hbase-namespace", envOr("SIMDEX_HBASE_NAMESPACE", "simdex"), "namespace of the tables (SIMDEX_HBASE_NAMESPACE)")
	retention := fs.Duration("retention", 0, "TTL of index, fp and docs cells (0: forever)")
	compression := fs.String("compression", "SNAPPY", "family compression")
	b := fs.Int("layout-b", fingerprint.DefaultLayout.B, "layout blocks B (index pre-split keys)")
	k := fs.Int("layout-k", fingerprint.DefaultLayout.K, "layout distance K")
	regions := fs.Int("index-regions", 1, "index table regions at creation (rounded up to a multiple of the layout's table count)")
	seenTTL := fs.Duration("seen-ttl", schema.DefaultSeenTTL, "TTL of seen-table cells: seen retention plus one bucket (negative: forever)")
	seenRegions := fs.Int("seen-regions", 1, "seen table regions at creation (equal ranges of the 2-byte user salt)")
	yes := fs.Bool("yes", false, "confirm drop")
	fps := fs.Int64("fingerprints", 0, "plan: expected fingerprints at load")
	rate := fs.Float64("insert-rate", 0, "plan: inserts per second")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want one of create, verify, describe, drop, plan", ErrUsage)
	}
	if pos[0] == "plan" {
		p, err := schema.MakePlan(schema.PlanInput{Fingerprints: *fps, InsertsPerSecond: *rate, Retention: *retention})
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
		fmt.Fprint(env.Stdout, p.String())
		return nil
	}
	sc := schema.Schema{Namespace: *ns, Compression: *compression, Retention: *retention, Layout: fingerprint.Layout{B: *b, K: *k}, IndexRegions: *regions, SeenTTL: *seenTTL, SeenRegions: *seenRegions}.WithDefaults()
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var quorum []string
	for _, a := range strings.Split(*zk, ",") {
		if a = strings.TrimSpace(a); a != "" {
			quorum = append(quorum, a)
		}
	}
	if len(quorum) == 0 {
		return fmt.Errorf("%w: --hbase-zk (or SIMDEX_HBASE_ZK) is required", ErrUsage)
	}
	c, err := hbase.New(hbase.Config{ZooKeeper: quorum, MaxRetries: 5})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	switch pos[0] {
	case "create":
		created, err := schema.Create(ctx, c, sc)
		for _, n := range created {
			fmt.Fprintf(env.Stdout, "created %s\n", n)
		}
		if err != nil {
			return err
		}
		drifts, err := schema.Verify(ctx, c, sc)
		for _, d := range drifts {
			fmt.Fprintf(env.Stdout, "drift: %s\n", d)
		}
		return err
	case "verify":
		drifts, err := schema.Verify(ctx, c, sc)
		for _, d := range drifts {
			fmt.Fprintf(env.Stdout, "drift: %s\n", d)
		}
		if err == nil {
			fmt.Fprintf(env.Stdout, "ok: namespace %s matches the declared schema\n", sc.Namespace)
		}
		return err
	case "describe":
		out, err := schema.DescribeAll(ctx, c, sc)
		fmt.Fprint(env.Stdout, out)
		return err
	case "drop":
		if !*yes {
			return fmt.Errorf("%w: drop deletes every table of namespace %s and its data: add --yes", ErrUsage, sc.Namespace)
		}
		if err := schema.Drop(ctx, c, sc); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "dropped namespace %s\n", sc.Namespace)
		return nil
	}
	return fmt.Errorf("%w: unknown schema command %q", ErrUsage, pos[0])
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
