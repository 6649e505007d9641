package schema

import (
	"context"
	"fmt"
	"strings"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/storage"
)

// Role is what a principal does with simdex's tables, and so what it must
// be granted on a cluster that checks permissions (hbase.security.
// authorization with HBase's AccessController). The principal that
// creates the tables (simdexctl schema create) owns them and needs no
// grant; creating the namespace takes ADMIN on the cluster.
type Role string

const (
	// RoleServer is the REST server (cmd/simdex): it reads and writes
	// every table (READ and WRITE on the namespace), and, unless its
	// compaction leaves HBase's store files alone, its compaction runs and
	// seen folds flush and major-compact the index and seen tables, which
	// takes CREATE on those two (HBase checks CREATE or ADMIN).
	RoleServer Role = "server"
	// RoleLoader is the bulk loader (cmd/bulkload) and the Spark job that
	// runs it: READ and WRITE on the namespace for its puts, and CREATE on
	// the tables it imports HFiles into (index, fp, docs, bands): HBase
	// checks CREATE or ADMIN for a bulk load and for reading the table's
	// descriptor, whose block size the loader writes its files with.
	RoleLoader Role = "loader"
)

// Roles lists the roles Grants knows.
var Roles = []Role{RoleServer, RoleLoader}

// Grants returns what user needs on the schema's tables to act as role.
// On a cluster that checks permissions the loader's principal gets them
// all, as a server's does unless storeCompaction is false.
// storeCompaction is the server's compaction and seen folds asking HBase
// to flush and major-compact (their default; false with the server's
// --compact-keep-store-history, or when the server runs neither).
func (s Schema) Grants(user string, role Role, storeCompaction bool) ([]hbase.Permission, error) {
	if user == "" {
		return nil, fmt.Errorf("%w: grants: no user", ErrInvalid)
	}
	switch role {
	case RoleServer:
		out := []hbase.Permission{{User: user, Namespace: s.Namespace, Rights: []hbase.Right{hbase.RightRead, hbase.RightWrite}}}
		if storeCompaction {
			for _, t := range []storage.Table{storage.TableIndex, storage.TableSeen} {
				out = append(out, hbase.Permission{User: user, Table: s.TableName(t), Rights: []hbase.Right{hbase.RightCreate}})
			}
		}
		return out, nil
	case RoleLoader:
		out := []hbase.Permission{{User: user, Namespace: s.Namespace, Rights: []hbase.Right{hbase.RightRead, hbase.RightWrite}}}
		for _, t := range []storage.Table{storage.TableIndex, storage.TableFP, storage.TableDocs, storage.TableBands} {
			out = append(out, hbase.Permission{User: user, Table: s.TableName(t), Rights: []hbase.Right{hbase.RightCreate}})
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: role %q: want one of %v", ErrInvalid, role, Roles)
}

// MissingGrants returns, of perms (Grants'), the rights their users do not
// hold, as the cluster lists them: a right held on the whole cluster or on
// the namespace counts for its tables too, and ADMIN for CREATE, as HBase
// checks them for what the roles do. Listing
// another user's permissions takes ADMIN on the scope.
func MissingGrants(ctx context.Context, c *hbase.Client, perms []hbase.Permission) ([]hbase.Permission, error) {
	var missing []hbase.Permission
	for _, p := range perms {
		held := map[hbase.Right]bool{}
		scopes := [][2]string{{"", ""}} // the cluster
		ns := p.Namespace
		if p.Table != "" {
			if n, _, ok := strings.Cut(p.Table, ":"); ok {
				ns = n
			} else {
				ns = "default"
			}
			scopes = append(scopes, [2]string{"", p.Table})
		}
		if ns != "" {
			scopes = append(scopes, [2]string{ns, ""})
		}
		for _, sc := range scopes {
			got, err := c.Permissions(ctx, p.User, sc[0], sc[1])
			if err != nil {
				return nil, fmt.Errorf("permissions of %s: %w", p.User, err)
			}
			for _, g := range got {
				if g.User != p.User {
					continue
				}
				for _, r := range g.Rights {
					held[r] = true
				}
			}
		}
		var lack []hbase.Right
		for _, r := range p.Rights {
			// Where the roles need CREATE, HBase accepts ADMIN instead.
			if !held[r] && !(r == hbase.RightCreate && held[hbase.RightAdmin]) {
				lack = append(lack, r)
			}
		}
		if len(lack) > 0 {
			q := p
			q.Rights = lack
			missing = append(missing, q)
		}
	}
	return missing, nil
}
