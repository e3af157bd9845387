package org.harvester.shim.resourcemanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.junit.jupiter.api.Test;

/**
 * The policy's own contract without a ResourceManager (SchedulerNodes need a live RM: the order
 * itself is NodeOrderer's, tested in common; the full path is tests/integration/
 * test_shim_resourcemanager.py).
 */
class HarvesterNodeLookupPolicyTest {
  private static HarvesterNodeLookupPolicy<SchedulerNode> policy(String jobType, Map<String, String> conf) {
    return new HarvesterNodeLookupPolicy<SchedulerNode>(jobType, conf::get) {
    };
  }

  @Test
  void policiesOfOneResourceManagerShareOneRefresher() {
    Map<String, String> conf = new HashMap<>();
    conf.put(HarvesterNodeLookupPolicy.PREFIX + "advice.url", "http://127.0.0.1:9/v1/yarn/node-ordering");
    HarvesterNodeLookupPolicy<SchedulerNode> a = policy("short", conf);
    HarvesterNodeLookupPolicy<SchedulerNode> b = policy("long", conf);
    assertSame(a.client(), b.client());
    assertEquals("long", b.jobType());
  }

  @Test
  void withoutAdviceTheOrderIsHadoopsAndCounted() {
    HarvesterNodeLookupPolicy<SchedulerNode> p = policy("medium", new HashMap<>());
    assertFalse(p.client().settings().enabled);
    p.addAndRefreshNodesSet(Collections.emptyList(), "");
    assertTrue(p.getNodesPerPartition("").isEmpty());
    assertFalse(p.getPreferredNodeIterator(Collections.emptyList(), "").hasNext());
    assertEquals(1, p.counters().fallbackCount("no_advice"));
    assertTrue(p.getNodesPerPartition("gpu").isEmpty(), "unknown partition: empty, like Hadoop's policies");
  }
}
