// Package chaos holds simdex's chaos tests: two real servers (cmd/server, on
// loopback HTTP, one HBase namespace) take insert-if-unique and check traffic
// while a multi-process HBase cluster on HDFS (scripts/hbase/cluster.sh) goes
// through what production clusters go through: a region server killed with
// SIGKILL, regions moved by hand and by the balancer, index and docs regions
// split and merged, a rolling restart of the region servers, the active
// master killed. After each event the tests check that no acknowledged insert
// was lost, that racing near-duplicates left exactly one original, that
// clients saw only 2xx or 503 with Retry-After, that the servers recovered
// without a restart and leaked no goroutines or connections, and they report
// the longest unavailability and the p99 latency during the event.
//
// The tests run only against a cluster named by SIMDEX_HBASE_CLUSTER (its
// ZooKeeper, host:port, as cluster.sh start prints it); cluster.sh is called
// with the test's environment (SIMDEX_CLUSTER_DATA, SIMDEX_CLUSTER_PORT_BASE)
// to kill and restart its processes. scripts/hbase/chaos.sh starts a cluster
// and runs them; scripts/test.sh runs the region-server kill and the moves.
// The package has no code outside its tests.
package chaos
