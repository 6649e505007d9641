package schema

import (
	"fmt"

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
