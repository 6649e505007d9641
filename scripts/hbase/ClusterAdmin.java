// ClusterAdmin drives the region operations of a multi-server HBase (the one
// scripts/hbase/cluster.sh starts) through HBase's own Java Admin API, for
// simdex's chaos tests and for operators: where each region is, moves, the
// balancer, splits and merges. Run it with `cluster.sh admin`, which compiles
// it and passes the ZooKeeper address first:
//
//   ClusterAdmin ZK COMMAND ARGS...   one command
//   ClusterAdmin ZK -                 commands read from stdin, one a line;
//                                     after each one's output a line "ok" or
//                                     "err MESSAGE" (one connection for all,
//                                     so a test pays for one JVM)
//
// Commands (servers are HOST,PORT,STARTCODE as HBase names them; rows hex):
//   wait-servers N BACKUPS SECONDS  until the active master reports >= N live
//                                   region servers and >= BACKUPS backup
//                                   masters and hbase:meta scans; exit 1 if
//                                   not within SECONDS
//   status                          master NAME / backup NAME / server NAME
//                                   REGIONS, one a line
//   regions TABLE                   ENCODED SERVER STARTHEX ENDHEX, one a line
//                                   per region, in key order ("-" empty)
//   move ENCODED SERVER             moves a region and waits until it is open
//   balance                         runs the balancer once (switched on first);
//                                   prints whether it ran
//   split ENCODED ROWHEX            splits a region at a row and waits
//   merge ENCODED ENCODED           merges two adjacent regions and waits
//   unload SERVER                   moves every region off a server, spread
//                                   over the others (a graceful stop's first half)
//   compact TABLE                   major-compacts a table and waits until it is
//                                   done: a region fresh from a split or a
//                                   merge still refers to its parents' files
//                                   and can be neither split nor merged again
//                                   until a compaction rewrote them and the
//                                   catalog janitor (run here too) forgot the
//                                   parents
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.ServerMetrics;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

public class ClusterAdmin {
  static final HexFormat HEX = HexFormat.of();

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      usage();
    }
    Configuration conf = HBaseConfiguration.create();
    String[] hp = args[0].split(":");
    conf.set("hbase.zookeeper.quorum", hp[0]);
    conf.set("hbase.zookeeper.property.clientPort", hp[1]);
    // Fail fast when the cluster is not there yet: the callers poll.
    conf.setInt("hbase.client.retries.number", 3);
    conf.setInt("hbase.rpc.timeout", 10000);
    conf.setInt("hbase.client.operation.timeout", 30000);
    conf.setInt("zookeeper.recovery.retry", 1);
    if (args[1].equals("wait-servers")) {
      System.exit(waitServers(conf, Integer.parseInt(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4])));
    }
    // Region operations under chaos wait for the master, not the caller.
    conf.setInt("hbase.client.retries.number", 15);
    conf.setInt("hbase.client.operation.timeout", 300000);
    try (Connection c = ConnectionFactory.createConnection(conf); Admin a = c.getAdmin()) {
      if (!args[1].equals("-")) {
        String[] cmd = new String[args.length - 1];
        System.arraycopy(args, 1, cmd, 0, cmd.length);
        run(c, a, cmd);
        return;
      }
      BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String l; (l = r.readLine()) != null; ) {
        if (l.isBlank()) {
          continue;
        }
        try {
          run(c, a, l.trim().split("\\s+"));
          System.out.println("ok");
        } catch (Exception e) {
          System.out.println("err " + String.valueOf(e).replace('\n', ' '));
        }
        System.out.flush();
      }
    }
  }

  static void run(Connection c, Admin a, String[] cmd) throws Exception {
    switch (cmd[0]) {
      case "status":
        status(a);
        break;
      case "regions":
        regions(c, cmd[1]);
        break;
      case "move":
        a.move(Bytes.toBytes(cmd[1]), ServerName.valueOf(cmd[2]));
        break;
      case "balance":
        a.balancerSwitch(true, true);
        System.out.println(a.balance() ? "ran" : "not-run");
        break;
      case "split":
        a.splitRegionAsync(Bytes.toBytes(cmd[1]), unhex(cmd[2])).get(300, TimeUnit.SECONDS);
        break;
      case "merge":
        a.mergeRegionsAsync(new byte[][] {Bytes.toBytes(cmd[1]), Bytes.toBytes(cmd[2])}, false)
            .get(300, TimeUnit.SECONDS);
        break;
      case "unload":
        unload(a, ServerName.valueOf(cmd[1]));
        break;
      case "compact":
        compact(a, TableName.valueOf(cmd[1]));
        break;
      default:
        throw new IllegalArgumentException("unknown command " + cmd[0]);
    }
  }

  static int waitServers(Configuration conf, int n, int backups, int seconds) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    String last = "";
    while (System.nanoTime() < deadline) {
      try (Connection c = ConnectionFactory.createConnection(conf); Admin a = c.getAdmin()) {
        while (System.nanoTime() < deadline) {
          ClusterMetrics m = a.getClusterMetrics();
          int live = m.getLiveServerMetrics().size();
          int b = m.getBackupMasterNames().size();
          last = "live region servers " + live + ", backup masters " + b;
          if (live >= n && b >= backups) {
            try (Table t = c.getTable(TableName.META_TABLE_NAME);
                ResultScanner s = t.getScanner(new Scan().setLimit(1))) {
              s.next();
            }
            System.err.println("ClusterAdmin: serving: " + last);
            return 0;
          }
          Thread.sleep(1000);
        }
      } catch (Exception e) {
        last = String.valueOf(e);
        Thread.sleep(1000);
      }
    }
    System.err.println("ClusterAdmin: not serving within " + seconds + "s: " + last);
    return 1;
  }

  static void status(Admin a) throws Exception {
    ClusterMetrics m = a.getClusterMetrics();
    System.out.println("master " + m.getMasterName());
    for (ServerName b : m.getBackupMasterNames()) {
      System.out.println("backup " + b);
    }
    for (ServerMetrics s : m.getLiveServerMetrics().values()) {
      System.out.println("server " + s.getServerName() + " " + s.getRegionMetrics().size());
    }
  }

  static void regions(Connection c, String table) throws Exception {
    try (RegionLocator l = c.getRegionLocator(TableName.valueOf(table))) {
      for (HRegionLocation loc : l.getAllRegionLocations()) {
        RegionInfo ri = loc.getRegion();
        if (ri.isSplitParent() || ri.isOffline() || ri.getReplicaId() != 0) {
          continue;
        }
        System.out.println(ri.getEncodedName() + " " + (loc.getServerName() == null ? "-" : loc.getServerName())
            + " " + hex(ri.getStartKey()) + " " + hex(ri.getEndKey()));
      }
    }
  }

  static void unload(Admin a, ServerName from) throws Exception {
    List<ServerName> others = new ArrayList<>();
    for (ServerName s : a.getRegionServers()) {
      if (!s.equals(from)) {
        others.add(s);
      }
    }
    if (others.isEmpty()) {
      throw new IllegalStateException("no other region server to move regions to");
    }
    int i = 0;
    for (RegionInfo ri : a.getRegions(from)) {
      a.move(ri.getEncodedNameAsBytes(), others.get(i++ % others.size()));
    }
  }

  static void compact(Admin a, TableName t) throws Exception {
    a.majorCompact(t);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
    // The request is queued on the region servers; give it a moment to show.
    Thread.sleep(1000);
    while (a.getCompactionState(t) != org.apache.hadoop.hbase.client.CompactionState.NONE) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("compaction of " + t + " still running after 300s");
      }
      Thread.sleep(500);
    }
    a.runCatalogJanitor();
  }

  static byte[] unhex(String s) {
    return s.equals("-") ? new byte[0] : HEX.parseHex(s);
  }

  static String hex(byte[] b) {
    return b.length == 0 ? "-" : HEX.formatHex(b);
  }

  static void usage() {
    System.err.println("usage: ClusterAdmin ZK COMMAND ARGS... | ClusterAdmin ZK - (see ClusterAdmin.java)");
    System.exit(2);
  }
}
