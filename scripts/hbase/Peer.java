// Peer is simdex's reference peer: HBase's own Java client, driven from the
// command line, so the Go client in hbase/ can be checked against it (cells
// written by one read back byte for byte by the other, table attributes set by
// one seen by the other, the same benchmark run by both). Run it with
// scripts/hbase/peer.sh, which puts HBase's classpath on it.
//
// Commands (ZK is host:port of the ZooKeeper quorum):
//   wait ZK SECONDS        until the master lists namespaces and hbase:meta
//                          scans (HBase really serves), or fail after SECONDS
//   write ZK TABLE         puts the cells read from stdin, one a line:
//                          ROW FAMILY QUALIFIER TIMESTAMP VALUE (hex; "-" is
//                          empty), in one batch
//   read ZK TABLE          reads the rows named on stdin (hex, one a line)
//                          and prints every cell, all versions, one a line:
//                          ROW FAMILY QUALIFIER TIMESTAMP TYPE VALUE (hex)
//   describe ZK TABLE      prints the table's families as HBase's Java Admin
//                          API sees them: NAME KEY=VALUE ..., one a line
//   bench ZK TABLE N       times N single puts, batches of 1,000
//                          puts (max(20, N/100) batches) and N 4-row
//                          multi-gets; prints JSON
//   flush ZK NAMESPACE     flushes every table of the namespace (memstore to
//                          HFiles, what a restart does) and waits for it, so
//                          benchmarks read HFile blocks as in production
//   major-compact ZK TABLE major-compacts the table (rewrites its HFiles with
//                          the families' current attributes, e.g. after an
//                          alter of BLOCKSIZE) and waits until it is done
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.TableDescriptor;
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
      case "write":
        write(args[1], args[2]);
        break;
      case "read":
        read(args[1], args[2]);
        break;
      case "describe":
        describe(args[1], args[2]);
        break;
      case "bench":
        bench(args[1], args[2], Integer.parseInt(args[3]));
        break;
      case "flush":
        flush(args[1], args[2]);
        break;
      case "major-compact":
        majorCompact(args[1], args[2]);
        break;
      default:
        usage();
    }
  }

  static final HexFormat HEX = HexFormat.of();

  static byte[] unhex(String s) {
    return s.equals("-") ? new byte[0] : HEX.parseHex(s);
  }

  static String hex(byte[] b, int off, int len) {
    return len == 0 ? "-" : HEX.formatHex(b, off, off + len);
  }

  static List<String> stdinLines() throws Exception {
    List<String> out = new ArrayList<>();
    BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String l; (l = r.readLine()) != null; ) {
      if (!l.isBlank()) {
        out.add(l.trim());
      }
    }
    return out;
  }

  static void write(String zk, String table) throws Exception {
    List<Put> puts = new ArrayList<>();
    for (String l : stdinLines()) {
      String[] f = l.split(" ");
      puts.add(new Put(unhex(f[0])).addColumn(unhex(f[1]), unhex(f[2]), Long.parseLong(f[3]), unhex(f[4])));
    }
    try (Connection conn = ConnectionFactory.createConnection(conf(zk, 10));
        Table t = conn.getTable(TableName.valueOf(table))) {
      t.put(puts);
    }
  }

  static void read(String zk, String table) throws Exception {
    StringBuilder out = new StringBuilder();
    try (Connection conn = ConnectionFactory.createConnection(conf(zk, 10));
        Table t = conn.getTable(TableName.valueOf(table))) {
      for (String l : stdinLines()) {
        Result r = t.get(new Get(unhex(l)).readAllVersions());
        for (Cell c : r.rawCells()) {
          out.append(hex(c.getRowArray(), c.getRowOffset(), c.getRowLength())).append(' ')
              .append(hex(c.getFamilyArray(), c.getFamilyOffset(), c.getFamilyLength())).append(' ')
              .append(hex(c.getQualifierArray(), c.getQualifierOffset(), c.getQualifierLength())).append(' ')
              .append(c.getTimestamp()).append(' ')
              .append(c.getType()).append(' ')
              .append(hex(c.getValueArray(), c.getValueOffset(), c.getValueLength())).append('\n');
        }
      }
    }
    System.out.print(out);
  }

  static void describe(String zk, String table) throws Exception {
    try (Connection conn = ConnectionFactory.createConnection(conf(zk, 10));
        Admin admin = conn.getAdmin()) {
      TableDescriptor td = admin.getDescriptor(TableName.valueOf(table));
      for (ColumnFamilyDescriptor cf : td.getColumnFamilies()) {
        System.out.println(cf.getNameAsString()
            + " COMPRESSION=" + cf.getCompressionType()
            + " DATA_BLOCK_ENCODING=" + cf.getDataBlockEncoding()
            + " BLOOMFILTER=" + cf.getBloomFilterType()
            + " VERSIONS=" + cf.getMaxVersions()
            + " TTL=" + cf.getTimeToLive()
            + " IS_MOB=" + cf.isMobEnabled()
            + " MOB_THRESHOLD=" + cf.getMobThreshold()
            + " BLOCKSIZE=" + cf.getBlocksize());
      }
      System.out.println("REGIONS " + admin.getRegions(TableName.valueOf(table)).size());
    }
  }

  // bench does what BenchmarkHBase* in hbase/bench_test.go do, with the
  // same rows ("row%08d", 10,000 of them, written by the Go benchmarks), one
  // thread, after a warm-up: N 4-row multi-gets (p50/p99), N single puts,
  // and max(20, N/100) Multi batches of 1,000 puts.
  static void bench(String zk, String table, int n) throws Exception {
    java.util.Random rng = new java.util.Random(1);
    byte[] f = "f".getBytes(StandardCharsets.UTF_8);
    byte[] q = "q".getBytes(StandardCharsets.UTF_8);
    byte[] v = new byte[100];
    try (Connection conn = ConnectionFactory.createConnection(conf(zk, 10));
        Table t = conn.getTable(TableName.valueOf(table))) {
      // Warm-up: connections, region locations, JIT.
      for (int i = 0; i < 2000; i++) {
        t.get(gets4(rng));
        t.put(new Put(String.format("java-warm%08d", i).getBytes(StandardCharsets.UTF_8)).addColumn(f, q, v));
      }
      long[] lat = new long[n];
      for (int i = 0; i < n; i++) {
        List<Get> gs = gets4(rng);
        long s0 = System.nanoTime();
        Result[] rs = t.get(gs);
        lat[i] = System.nanoTime() - s0;
        if (rs.length != 4 || rs[0].isEmpty()) {
          throw new IllegalStateException("multi-get returned no row: load the rows with the Go benchmarks first");
        }
      }
      Arrays.sort(lat);
      long s1 = System.nanoTime();
      for (int i = 0; i < n; i++) {
        t.put(new Put(String.format("java-put%08d", i).getBytes(StandardCharsets.UTF_8)).addColumn(f, q, v));
      }
      double putsPerSec = n / ((System.nanoTime() - s1) / 1e9);
      int batches = Math.max(20, n / 100);
      long s2 = System.nanoTime();
      for (int b = 0; b < batches; b++) {
        List<Put> ps = new ArrayList<>(1000);
        for (int i = 0; i < 1000; i++) {
          ps.add(new Put(String.format("java-batch%04d-%04d", b, i).getBytes(StandardCharsets.UTF_8)).addColumn(f, q, v));
        }
        t.put(ps);
      }
      double batchedPerSec = batches * 1000 / ((System.nanoTime() - s2) / 1e9);
      System.out.printf("{\"client\":\"java\",\"multiget4_p50_us\":%.1f,\"multiget4_p99_us\":%.1f,\"single_puts_per_s\":%.0f,\"batched_puts_per_s\":%.0f}%n",
          lat[n / 2] / 1e3, lat[(int) (n * 0.99)] / 1e3, putsPerSec, batchedPerSec);
    }
  }

  static List<Get> gets4(java.util.Random rng) {
    List<Get> gs = new ArrayList<>(4);
    for (int i = 0; i < 4; i++) {
      gs.add(new Get(String.format("row%08d", rng.nextInt(10000)).getBytes(StandardCharsets.UTF_8)));
    }
    return gs;
  }

  static void flush(String zk, String ns) throws Exception {
    try (Connection conn = ConnectionFactory.createConnection(conf(zk, 10));
        Admin admin = conn.getAdmin()) {
      for (TableName t : admin.listTableNamesByNamespace(ns)) {
        admin.flush(t);
        System.out.println("flushed " + t.getNameAsString());
      }
    }
  }

  static void majorCompact(String zk, String table) throws Exception {
    try (Connection conn = ConnectionFactory.createConnection(conf(zk, 10));
        Admin admin = conn.getAdmin()) {
      TableName t = TableName.valueOf(table);
      admin.majorCompact(t);
      // The request is queued: wait for the compaction to start, then to end.
      long deadline = System.currentTimeMillis() + 10_000;
      while (admin.getCompactionState(t) == org.apache.hadoop.hbase.client.CompactionState.NONE
          && System.currentTimeMillis() < deadline) {
        Thread.sleep(100);
      }
      while (admin.getCompactionState(t) != org.apache.hadoop.hbase.client.CompactionState.NONE) {
        Thread.sleep(500);
      }
      System.out.println("major-compacted " + table);
    }
  }

  static void usage() {
    System.err.println("usage: Peer wait|write|read|describe|bench|flush|major-compact ZK ...");
    System.exit(2);
  }

  static Configuration conf(String zk, int retries) {
    Configuration c = HBaseConfiguration.create();
    int colon = zk.lastIndexOf(':');
    c.set("hbase.zookeeper.quorum", zk.substring(0, colon));
    c.set("hbase.zookeeper.property.clientPort", zk.substring(colon + 1));
    // Find the cluster through ZooKeeper, as simdex's client does. That is
    // the default up to HBase 2.x; HBase 3.0's default registry asks the
    // masters named in hbase.masters (localhost:16000) instead.
    c.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.ZKConnectionRegistry");
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
