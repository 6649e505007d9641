package ctl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/config"
	"github.com/simdex/simdex/schema"
)

var schemaVerb = Verb{
	Name:    "schema",
	Usage:   "create|verify [--user U]|describe|drop --yes|grant|revoke --user U|plan [--hbase-zk Q] [--hbase-namespace NS] [--retention D] [--compression C] [--layout-b B --layout-k K] [--index-regions N] [--role server|loader] [--keep-store-history] [--fingerprints N --insert-rate R]",
	Summary: "create, verify, describe or drop simdex's HBase tables; grant a server's principal what it needs on them; plan their size",
	Run:     runSchema,
}

// schemaConfig is the schema verb's configuration.
type schemaConfig struct {
	// HBase is the cluster (HBaseCreateTables is not used).
	config.HBase
	// Command is create, verify, describe, drop, grant, revoke or plan.
	Command string
	// User, Role and KeepStoreHistory choose grant's and revoke's
	// permissions (schema.Grants): User is HBase's name for the principal.
	User             string
	Role             string
	KeepStoreHistory bool
	// Retention is the TTL of index, fp and docs cells (0: forever).
	Retention   time.Duration
	Compression string
	// LayoutB and LayoutK are the layout the index table is pre-split for.
	LayoutB, LayoutK int
	IndexRegions     int
	SeenTTL          time.Duration
	SeenRegions      int
	MetaRegions      int
	// Yes confirms drop.
	Yes bool
	// Fingerprints and InsertRate are plan's input.
	Fingerprints int64
	InsertRate   float64
}

func defaultSchemaConfig() schemaConfig {
	return schemaConfig{HBase: config.DefaultHBase(), Compression: "SNAPPY", LayoutB: fingerprint.DefaultLayout.B, LayoutK: fingerprint.DefaultLayout.K,
		IndexRegions: 1, SeenTTL: schema.DefaultSeenTTL, SeenRegions: 1, MetaRegions: schema.DefaultMetaRegions, Role: string(schema.RoleServer)}
}

// schema is the declared schema of c.
func (c schemaConfig) schema() schema.Schema {
	return schema.Schema{Namespace: c.HBaseNamespace, Compression: c.Compression, Retention: c.Retention, Layout: fingerprint.Layout{B: c.LayoutB, K: c.LayoutK},
		IndexRegions: c.IndexRegions, SeenTTL: c.SeenTTL, SeenRegions: c.SeenRegions, MetaRegions: c.MetaRegions}.WithDefaults()
}

// Validate reports what is wrong with c (wrapping ErrUsage): the command,
// and but for plan the schema, the HBase settings and drop's --yes.
func (c schemaConfig) Validate() error {
	switch c.Command {
	case "plan":
		return nil
	case "create", "describe", "drop":
	case "verify", "grant", "revoke":
		// verify checks grants only when given a user; the others need one.
		if c.Command == "verify" && c.User == "" {
			break
		}
		if _, err := c.grants(); err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
	default:
		return fmt.Errorf("%w: want one of %s", ErrUsage, schemaCommands)
	}
	if err := c.schema().Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if err := c.ValidateHBase("schema " + c.Command); err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if c.Command == "drop" && !c.Yes {
		return fmt.Errorf("%w: drop deletes every table of namespace %s and its data: add --yes", ErrUsage, c.HBaseNamespace)
	}
	return nil
}

// verifyGrants prints the rights cfg.User lacks for its role (schema
// verify --user), or that it has them all.
func verifyGrants(ctx context.Context, env *Env, c *hbase.Client, cfg schemaConfig) error {
	perms, err := cfg.grants()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	missing, err := schema.MissingGrants(ctx, c, perms)
	if err != nil {
		return err
	}
	for _, p := range missing {
		fmt.Fprintf(env.Stdout, "missing grant: %s\n", p)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %d of the grants role %s needs: simdexctl schema grant --user %s --role %s", cfg.User, len(missing), cfg.Role, cfg.User, cfg.Role)
	}
	fmt.Fprintf(env.Stdout, "ok: %s holds what role %s needs\n", cfg.User, cfg.Role)
	return nil
}

// schemaCommands are the schema verb's commands, for usage errors.
const schemaCommands = "create, verify, describe, drop, grant, revoke, plan"

// grants is what grant and revoke give and take.
func (c schemaConfig) grants() ([]hbase.Permission, error) {
	return c.schema().Grants(c.User, schema.Role(c.Role), !c.KeepStoreHistory)
}

// parseSchema parses the verb's arguments.
func parseSchema(env *Env, args []string) (schemaConfig, error) {
	c := defaultSchemaConfig()
	s := newSet(env, hbaseExample)
	fs := s.Flags()
	c.HBaseFlags(fs, "", "")
	fs.DurationVar(&c.Retention, "retention", c.Retention, "TTL of index, fp and docs cells (0: forever)")
	fs.StringVar(&c.Compression, "compression", c.Compression, "family compression")
	fs.IntVar(&c.LayoutB, "layout-b", c.LayoutB, "layout blocks B (index pre-split keys)")
	fs.IntVar(&c.LayoutK, "layout-k", c.LayoutK, "layout distance K")
	fs.IntVar(&c.IndexRegions, "index-regions", c.IndexRegions, "index table regions at creation (rounded up to a multiple of the layout's table count)")
	fs.DurationVar(&c.SeenTTL, "seen-ttl", c.SeenTTL, "TTL of seen-table cells: seen retention plus one bucket (negative: forever)")
	fs.IntVar(&c.SeenRegions, "seen-regions", c.SeenRegions, "seen table regions at creation (equal ranges of the 2-byte user salt)")
	fs.IntVar(&c.MetaRegions, "meta-regions", c.MetaRegions, "meta table regions at creation (equal ranges of the lease-lock rows, so a cluster spreads the locks over its region servers)")
	fs.BoolVar(&c.Yes, "yes", c.Yes, "confirm drop")
	fs.StringVar(&c.User, "user", c.User, "grant, revoke, verify: HBase's name for the principal (its short name, e.g. simdex-svc for simdex-svc/host@REALM)")
	fs.StringVar(&c.Role, "role", c.Role, "grant, revoke, verify: what the principal does (server: the REST server; loader: cmd/bulkload and the Spark job)")
	fs.BoolVar(&c.KeepStoreHistory, "keep-store-history", c.KeepStoreHistory, "grant, revoke, verify: the server runs with --compact-keep-store-history (or compacts nothing), so it needs no CREATE on the index and seen tables")
	fs.Int64Var(&c.Fingerprints, "fingerprints", c.Fingerprints, "plan: expected fingerprints at load")
	fs.Float64Var(&c.InsertRate, "insert-rate", c.InsertRate, "plan: inserts per second")
	pos, err := parse(env, s, args)
	if err != nil {
		return c, err
	}
	if len(pos) != 1 {
		return c, fmt.Errorf("%w: want one of %s", ErrUsage, schemaCommands)
	}
	c.Command = pos[0]
	return c, c.Validate()
}

func runSchema(ctx context.Context, env *Env, args []string) error {
	cfg, err := parseSchema(env, args)
	if err != nil {
		return err
	}
	if cfg.Command == "plan" {
		p, err := schema.MakePlan(schema.PlanInput{Fingerprints: cfg.Fingerprints, InsertsPerSecond: cfg.InsertRate, Retention: cfg.Retention})
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
		fmt.Fprint(env.Stdout, p.String())
		return nil
	}
	sc := cfg.schema()
	hc, err := cfg.HBaseClientConfig()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	hc.MaxRetries = 5
	c, err := hbase.New(hc)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	switch cfg.Command {
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
		if cfg.User == "" {
			return err
		}
		return errors.Join(err, verifyGrants(ctx, env, c, cfg))
	case "describe":
		out, err := schema.DescribeAll(ctx, c, sc)
		fmt.Fprint(env.Stdout, out)
		return err
	case "drop":
		if err := schema.Drop(ctx, c, sc); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "dropped namespace %s\n", sc.Namespace)
		return nil
	case "grant", "revoke":
		perms, err := cfg.grants()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
		// HBase keeps a grant on a namespace that does not exist (yet):
		// most likely a mistyped --hbase-namespace, so say so instead.
		if cfg.Command == "grant" {
			nss, err := c.Namespaces(ctx)
			if err != nil {
				return err
			}
			if !slices.Contains(nss, sc.Namespace) {
				return fmt.Errorf("namespace %s does not exist: create the schema first (simdexctl schema create), or name its namespace with --hbase-namespace", sc.Namespace)
			}
		}
		do, verb := c.Grant, "granted"
		if cfg.Command == "revoke" {
			do, verb = c.Revoke, "revoked"
		}
		for _, p := range perms {
			if err := do(ctx, p); err != nil {
				return fmt.Errorf("%s %s: %w", cfg.Command, p, err)
			}
			fmt.Fprintf(env.Stdout, "%s %s\n", verb, p)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown schema command %q", ErrUsage, cfg.Command)
}
