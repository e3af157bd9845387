package org.harvester.shim.namenode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.hdfs.AddBlockFlag;
import org.apache.hadoop.hdfs.protocol.BlockStoragePolicy;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeStorageInfo;
import org.apache.hadoop.net.Node;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The fallback contract: whenever the plug-in cannot decide from a fresh table, the answer is
 * BlockPlacementPolicyDefault's (recorded here through the defaultChooseTarget seam). The
 * advised path needs a live NameNode's objects: tests/integration/test_shim_namenode.py.
 */
class HarvesterBlockPlacementPolicyTest {
  private static final DatanodeStorageInfo[] DEFAULT = new DatanodeStorageInfo[0];

  /** The policy with Hadoop's own choice replaced by a recorder. */
  static final class Recording extends HarvesterBlockPlacementPolicy {
    int defaults;

    @Override
    protected DatanodeStorageInfo[] defaultChooseTarget(String srcPath, int numOfReplicas, Node writer,
        List<DatanodeStorageInfo> chosen, boolean returnChosenNodes, Set<Node> excludedNodes, long blocksize,
        BlockStoragePolicy storagePolicy, EnumSet<AddBlockFlag> flags) {
      defaults++;
      return DEFAULT;
    }
  }

  private final Recording policy = new Recording();

  @AfterEach
  void stop() {
    if (policy.client() != null) {
      policy.client().close();
    }
  }

  private DatanodeStorageInfo[] choose(EnumSet<AddBlockFlag> flags) {
    return policy.chooseTarget("/f", 3, null, new ArrayList<>(), false, null, 1024, null, flags);
  }

  @Test
  void withoutAnAdviceUrlEveryDecisionIsTheDefault() {
    policy.configure(k -> null);
    assertSame(DEFAULT, choose(null));
    assertEquals(1, policy.defaults);
    assertEquals(1, policy.counters().fallbackCount("disabled"));
  }

  @Test
  void unreachableSidecarFallsBackWithoutFailingTheWrite() {
    Map<String, String> conf = new HashMap<>();
    conf.put(HarvesterBlockPlacementPolicy.PREFIX + "advice.url", "http://127.0.0.1:9/v1/hdfs/placement-table");
    policy.configure(conf::get);
    for (int k = 0; k < 5; k++) {
      assertSame(DEFAULT, choose(null));
    }
    assertEquals(5, policy.defaults);
    assertEquals(5, policy.counters().fallbackCount("no_table"));
  }

  @Test
  void addBlockFlagsAreLeftToTheDefault() {
    policy.configure(k -> null);
    assertSame(DEFAULT, choose(EnumSet.of(AddBlockFlag.NO_LOCAL_WRITE)));
    assertEquals(1, policy.counters().fallbackCount("flags"));
  }

  @Test
  void badConfigurationNamesTheKey() {
    Map<String, String> conf = new HashMap<>();
    conf.put(HarvesterBlockPlacementPolicy.VERIFY_GRID, "maybe");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> policy.configure(conf::get));
    assertEquals("harvester.shim.namenode.verify.grid: expected true or false, got maybe", e.getMessage());
  }
}
