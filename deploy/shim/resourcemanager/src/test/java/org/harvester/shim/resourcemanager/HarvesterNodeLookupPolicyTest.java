package org.harvester.shim.resourcemanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import javax.management.MBeanServer;
import javax.management.ObjectName;
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

  private static long attribute(String jobType, String name) throws Exception {
    ObjectName on = new ObjectName("Hadoop:service=ResourceManager,name=HarvesterNodeOrdering-" + jobType);
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    return server.isRegistered(on) ? (Long) server.getAttribute(on, name) : 0;
  }

  /** An RM that becomes active again builds new sorters, hence new policies: the bean keeps counting. */
  @Test
  void theBeanSurvivesASecondInstanceAndCountsLookupsOfBoth() throws Exception {
    HarvesterNodeLookupPolicy<SchedulerNode> first = policy("short", new HashMap<>());
    long lookups = attribute("short", "Lookups");
    long fallbacks = attribute("short", "Fallbacks");
    first.getPreferredNodeIterator(Collections.emptyList(), "");
    HarvesterNodeLookupPolicy<SchedulerNode> second = policy("short", new HashMap<>());
    second.getPreferredNodeIterator(Collections.emptyList(), "");
    first.getPreferredNodeIterator(Collections.emptyList(), "");
    assertEquals(lookups + 3, attribute("short", "Lookups"));
    assertEquals(fallbacks + 3, attribute("short", "Fallbacks"));
    assertSame(first.client(), second.client());
  }

  @Test
  void withoutAdviceTheOrderIsHadoopsAndCounted() {
    HarvesterNodeLookupPolicy<SchedulerNode> p = policy("medium", new HashMap<>());
    assertFalse(p.client().settings().enabled);
    long before = p.counters().fallbackCount("disabled"); // JVM-wide counters: other tests add too
    p.addAndRefreshNodesSet(Collections.emptyList(), "");
    assertTrue(p.getNodesPerPartition("").isEmpty());
    assertFalse(p.getPreferredNodeIterator(Collections.emptyList(), "").hasNext());
    assertEquals(before + 1, p.counters().fallbackCount("disabled"), "one lookup, one decision");
    assertTrue(p.getNodesPerPartition("gpu").isEmpty(), "unknown partition: empty, like Hadoop's policies");
  }
}
