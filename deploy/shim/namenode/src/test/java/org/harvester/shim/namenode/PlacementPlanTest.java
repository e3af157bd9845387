package org.harvester.shim.namenode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import org.harvester.shim.common.Algorithm2;
import org.harvester.shim.common.PlacementIndex;
import org.harvester.shim.common.SplitMix64;
import org.junit.jupiter.api.Test;

/** Names as the NameNode passes them (transfer addresses, a writer's name) into Algorithm 2. */
class PlacementPlanTest {
  private static String node(String id, String host, String rack, String env, int row, int col) {
    return "{\"datanode_id\":\"" + id + "\",\"hostname\":\"" + host + "\",\"rack\":\"" + rack
        + "\",\"tenant\":\"t" + row + col + "\",\"environment\":\"" + env + "\",\"row\":" + row + ",\"col\":" + col
        + ",\"capacity_bytes\":10000000000,\"remaining_bytes\":5000000000,\"busy\":false}";
  }

  private static PlacementIndex table() {
    StringBuilder cells = new StringBuilder();
    for (int c = 0; c < 9; c++) {
      cells.append(c == 0 ? "" : ",").append("{\"row\":").append(c / 3).append(",\"col\":").append(c % 3)
          .append(",\"available_bytes\":0,\"tenants\":0}");
    }
    String[] nodes = new String[9];
    for (int c = 0; c < 9; c++) {
      nodes[c] = node("127.0.0.1:" + (9860 + c), "localhost", "/rack" + (c % 2), "e" + c, c / 3, c % 3);
    }
    return PlacementIndex.parse("{\"schema\":\"harvester.hdfs-placement.v1\",\"version\":3,\"generated_at_ms\":1,"
        + "\"busy_cpu_threshold\":0.9,\"cells\":[" + cells + "],\"datanodes\":[" + String.join(",", nodes) + "]}");
  }

  @Test
  void writerByTransferAddressGetsTheFirstReplica() {
    PlacementIndex ix = table();
    Algorithm2.Choice c = PlacementPlan.plan(ix, 3, 1024, "127.0.0.1:9864", Collections.emptyList(),
        Collections.emptyList(), new BitSet(), new SplitMix64(5));
    assertEquals("127.0.0.1:9864", ix.ids[c.nodes[0]]);
    assertFalse(c.anyRelaxed());
  }

  @Test
  void excludedAndRejectedNodesAreNeverChosen() {
    PlacementIndex ix = table();
    BitSet rejected = new BitSet();
    rejected.set(ix.resolve("127.0.0.1:9861"));
    for (long seed = 0; seed < 50; seed++) {
      Algorithm2.Choice c = PlacementPlan.plan(ix, 2, 1024, null, Arrays.asList("127.0.0.1:9860", "10.1.1.1:1"),
          Arrays.asList("127.0.0.1:9862", "not-a-datanode:1"), rejected, new SplitMix64(seed));
      assertEquals(2, c.nodes.length);
      for (int i : c.nodes) {
        assertFalse(Arrays.asList("127.0.0.1:9860", "127.0.0.1:9861", "127.0.0.1:9862").contains(ix.ids[i]));
      }
    }
  }
}
