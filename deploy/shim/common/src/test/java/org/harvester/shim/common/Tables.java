package org.harvester.shim.common;

import java.util.Random;

/** Placement tables as the sidecar serves them (schema harvester.hdfs-placement.v1), built in tests. */
final class Tables {
  private Tables() {
  }

  static String cells() {
    StringBuilder b = new StringBuilder("[");
    for (int c = 0; c < 9; c++) {
      b.append(c == 0 ? "" : ",").append("{\"row\":").append(c / 3).append(",\"col\":").append(c % 3)
          .append(",\"available_bytes\":0,\"tenants\":1}");
    }
    return b.append(']').toString();
  }

  static String node(String id, String host, String rack, String tenant, String env, int row, int col, long remaining,
      boolean busy) {
    return "{\"datanode_id\":\"" + id + "\",\"hostname\":\"" + host + "\",\"rack\":\"" + rack + "\",\"tenant\":\""
        + tenant + "\",\"environment\":\"" + env + "\",\"row\":" + row + ",\"col\":" + col
        + ",\"capacity_bytes\":" + (2 * remaining + 1) + ",\"remaining_bytes\":" + remaining + ",\"busy\":" + busy + "}";
  }

  static String table(long version, String... nodes) {
    return "{\"schema\":\"harvester.hdfs-placement.v1\",\"version\":" + version
        + ",\"grid_version\":1,\"generated_at_ms\":1795431979089,\"busy_cpu_threshold\":0.9,\"cells\":" + cells()
        + ",\"datanodes\":[" + String.join(",", nodes) + "]}";
  }

  /** Nine tenants, one per cell, {@code perTenant} nodes each on racks /rack0..; tenant tRC, env eRC. */
  static String grid9(long version, int perTenant) {
    String[] nodes = new String[9 * perTenant];
    int k = 0;
    for (int r = 0; r < 3; r++) {
      for (int c = 0; c < 3; c++) {
        for (int j = 0; j < perTenant; j++) {
          nodes[k++] = node("10.0." + (r * 3 + c) + "." + j + ":9866", "h" + r + c + j, "/rack" + j, "t" + r + c,
              "e" + r + c, r, c, 1_000_000_000_000L, false);
        }
      }
    }
    return table(version, nodes);
  }

  /** A random cluster of {@code n} nodes: random cells (some unclassified), racks, envs, space, busy. */
  static String random(Random rnd, int n) {
    String[] nodes = new String[n];
    for (int i = 0; i < n; i++) {
      boolean unclassified = rnd.nextInt(10) == 0;
      int row = unclassified ? -1 : rnd.nextInt(3);
      int col = unclassified ? -1 : rnd.nextInt(3);
      long remaining = rnd.nextInt(20) == 0 ? 0 : (1 + rnd.nextInt(1000)) * 1_000_000_000L;
      nodes[i] = node("10." + (i / 250) + "." + ((i / 25) % 10) + "." + (i % 250) + ":9866", "dn" + i,
          "/rack" + rnd.nextInt(8), "t" + rnd.nextInt(40), "env" + rnd.nextInt(12), row, col, remaining,
          rnd.nextInt(10) == 0);
    }
    return table(1 + rnd.nextInt(1000), nodes);
  }
}
