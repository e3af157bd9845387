package org.harvester.shim.namenode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.hadoop.hdfs.AddBlockFlag;
import org.apache.hadoop.hdfs.protocol.BlockStoragePolicy;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeStorageInfo;
import org.apache.hadoop.net.Node;
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

  private DatanodeStorageInfo[] choose(EnumSet<AddBlockFlag> flags) {
    return policy.chooseTarget("/f", 3, null, new ArrayList<>(), false, null, 1024, null, flags);
  }

  @Test
  void withoutAnAdviceUrlEveryDecisionIsTheDefault() {
    policy.configure(k -> null);
    long before = policy.counters().fallbackCount("disabled"); // JVM-wide counters: other tests add too
    assertSame(DEFAULT, choose(null));
    assertEquals(1, policy.defaults);
    assertEquals(before + 1, policy.counters().fallbackCount("disabled"));
  }

  @Test
  void unreachableSidecarFallsBackWithoutFailingTheWrite() {
    Map<String, String> conf = new HashMap<>();
    conf.put(HarvesterBlockPlacementPolicy.PREFIX + "advice.url", "http://127.0.0.1:9/v1/hdfs/placement-table");
    policy.configure(conf::get);
    long before = policy.counters().fallbackCount("no_table");
    for (int k = 0; k < 5; k++) {
      assertSame(DEFAULT, choose(null));
    }
    assertEquals(5, policy.defaults);
    assertEquals(before + 5, policy.counters().fallbackCount("no_table"));
  }

  @Test
  void addBlockFlagsAreLeftToTheDefault() {
    policy.configure(k -> null);
    long before = policy.counters().fallbackCount("flags");
    assertSame(DEFAULT, choose(EnumSet.of(AddBlockFlag.NO_LOCAL_WRITE)));
    assertEquals(before + 1, policy.counters().fallbackCount("flags"));
  }

  private static long threads(String prefix) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
  }

  private static Object attribute(String name) throws Exception {
    ObjectName on = new ObjectName(HarvesterBlockPlacementPolicy.MBEAN);
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    return server.isRegistered(on) ? server.getAttribute(on, name) : null;
  }

  private static long fallbacks() throws Exception {
    Object v = attribute("Fallbacks");
    return v == null ? 0 : (Long) v;
  }

  /** Every fsck builds a policy (NamenodeFsck: new BlockPlacementPolicies): it must not start a refresher. */
  @Test
  void aSecondInstanceReusesTheFirstsClientAndThread() {
    Map<String, String> conf = new HashMap<>();
    conf.put(HarvesterBlockPlacementPolicy.PREFIX + "advice.url", "http://127.0.0.1:9/reuse/placement-table");
    String name = "harvester-advice-placement-table";
    long before = threads(name);
    policy.configure(conf::get);
    long afterFirst = threads(name);
    assertEquals(before + 1, afterFirst, "the first instance starts the refresher");
    Recording fsck = new Recording();
    fsck.configure(conf::get);
    Recording another = new Recording();
    another.configure(conf::get);
    assertEquals(afterFirst, threads(name), "later instances start no thread");
    assertSame(policy.client(), fsck.client());
    assertSame(policy.client(), another.client());
  }

  @Test
  void theBeanSurvivesASecondInstanceAndCountsDecisionsOfBoth() throws Exception {
    policy.configure(k -> null);
    long before = fallbacks();
    choose(null);
    choose(null);
    Recording fsck = new Recording();
    fsck.configure(k -> null);
    assertEquals(before + 2, fallbacks(), "a new instance keeps the counts so far");
    fsck.chooseTarget("/g", 3, null, new ArrayList<>(), false, null, 1024, null, null);
    choose(null);
    assertEquals(before + 4, fallbacks(), "decisions through both instances");
    assertEquals(1, fsck.defaults);
    assertEquals(3, policy.defaults);
  }

  @Test
  void badConfigurationNamesTheKey() {
    Map<String, String> conf = new HashMap<>();
    conf.put(HarvesterBlockPlacementPolicy.VERIFY_GRID, "maybe");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> policy.configure(conf::get));
    assertEquals("harvester.shim.namenode.verify.grid: expected true or false, got maybe", e.getMessage());
  }
}
