// Peer is simdex's reference peer: HBase's own Java client, driven from the
// command line, so the Go client in hbase/ can be checked against it (cells
// written by one read back byte for byte by the other, table attributes set by
// one seen by the other, the same benchmark run by both). Run it with
// scripts/hbase/peer.sh, which puts HBase's classpath on it.
//
// Commands (ZK is host:port of the ZooKeeper quorum):
//   wait ZK SECONDS        until the master lists namespaces and hbase:meta
//                          scans (HBase really serves), or fail after SECONDS
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;

public class Peer {
  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      usage();
    }
    switch (args[0]) {
      case "wait":
        System.exit(waitReady(args[1], Integer.parseInt(args[2])));
        break;
      default:
        usage();
    }
  }

  static void usage() {
    System.err.println("usage: Peer wait ZK SECONDS");
    System.exit(2);
  }

  static Configuration conf(String zk, int retries) {
    Configuration c = HBaseConfiguration.create();
    int colon = zk.lastIndexOf(':');
    c.set("hbase.zookeeper.quorum", zk.substring(0, colon));
    c.set("hbase.zookeeper.property.clientPort", zk.substring(colon + 1));
    c.setInt("hbase.client.retries.number", retries);
    c.setInt("hbase.client.pause", 200);
    c.setInt("zookeeper.recovery.retry", 1);
    c.setInt("hbase.rpc.timeout", 10000);
    c.setInt("hbase.client.operation.timeout", 20000);
    return c;
  }

  // Returns 0 once an admin call through the master and a scan of hbase:meta
  // on the region server both succeed; 1 on timeout or when the server
  // process named by SIMDEX_HBASE_PID has died.
  static int waitReady(String zk, int seconds) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    String pidEnv = System.getenv("SIMDEX_HBASE_PID");
    Exception last = null;
    long start = System.nanoTime();
    while (System.nanoTime() < deadline) {
      if (pidEnv != null && !pidEnv.isEmpty()
          && !ProcessHandle.of(Long.parseLong(pidEnv)).map(ProcessHandle::isAlive).orElse(false)) {
        System.err.println("peer: HBase process " + pidEnv + " exited");
        return 1;
      }
      try (Connection conn = ConnectionFactory.createConnection(conf(zk, 2));
          Admin admin = conn.getAdmin();
          Table meta = conn.getTable(TableName.META_TABLE_NAME)) {
        int ns = admin.listNamespaceDescriptors().length;
        try (ResultScanner sc = meta.getScanner(new Scan().setLimit(1))) {
          Result r = sc.next();
          if (r == null) {
            throw new IllegalStateException("hbase:meta is empty");
          }
        }
        System.err.printf("peer: HBase at %s serves (%d namespaces) after %.1fs%n",
            zk, ns, (System.nanoTime() - start) / 1e9);
        return 0;
      } catch (Exception e) {
        last = e;
      }
      Thread.sleep(1000);
    }
    System.err.println("peer: HBase at " + zk + " not serving after " + seconds + "s: " + last);
    return 1;
  }
}
