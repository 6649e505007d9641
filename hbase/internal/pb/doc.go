// Package pb holds the protobuf messages of Apache HBase's RPC protocol that
// the hbase package uses, generated from hbase.proto (HBase's message names
// and field numbers) by scripts/hbase/gen.sh.
package pb
