package org.harvester.shim.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ResourceManager plug-in's logic with string node ids and a scheduler loop shaped like
 * Hadoop 3.3.6's RegularContainerAllocator#allocate (walk the lookup's iterator, stop on the
 * first node with room), the advice served over loopback HTTP: the counters, read through JMX,
 * show where the containers landed.
 */
class NodeLookupTest {
  private static final String DOC = "{\"schema\":\"harvester.node-ordering.v1\",\"version\":3,\"generated_at_ms\":1,"
      + "\"orderings\":{\"long\":{\"node_ids\":[\"nm3:1\",\"nm1:1\",\"gone:1\"],\"reason\":\"r\"},"
      + "\"short\":{\"node_ids\":[],\"reason\":\"no fresh guard decision\"}},\"queues\":{}}";
  private static final List<String> NODES = Arrays.asList("nm0:1", "nm1:1", "nm2:1", "nm3:1", "nm4:1");

  private HttpServer server;
  private final AtomicLong clock = new AtomicLong(1_000_000_000L);
  private AdviceClient<NodeOrderingAdvice> client;

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/v1/yarn/node-ordering", ex -> {
      byte[] b = DOC.getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(200, b.length);
      try (OutputStream os = ex.getResponseBody()) {
        os.write(b);
      }
    });
    server.start();
    URI url = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/v1/yarn/node-ordering");
    client = new AdviceClient<>("node-ordering", new AdviceSettings(true, url, 5000, 0, 2000, 5000, 10, 40),
        NodeOrderingAdvice::parse, a -> a.version, clock::get);
    assertTrue(client.fetchOnce());
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  /** One container: the scheduler's walk; the node it landed on, or null. */
  private static String place(Iterator<String> it, Map<String, Integer> free) {
    while (it.hasNext()) {
      String n = it.next();
      if (free.getOrDefault(n, 0) > 0) {
        free.merge(n, -1, Integer::sum);
        return n;
      }
    }
    return null;
  }

  @Test
  void containersLandOnTheAdvisedNodesAndTheBeanSaysSo() throws Exception {
    String name = "Hadoop:service=Test,name=HarvesterNodeOrdering-lookup";
    NodeOrderingBean bean = SharedAdvice.bean(name, client, NodeOrderingBean::new, HarvesterNodeOrderingMXBean.class);
    NodeLookup<String> lookup = new NodeLookup<>("long", client, bean.counters(), bean.lookups(), s -> s,
        Comparator.naturalOrder());
    lookup.refresh(NODES, "");
    assertEquals(Arrays.asList("nm3:1", "nm1:1", "nm0:1", "nm2:1", "nm4:1"), new ArrayList<>(lookup.nodes("")));
    Map<String, Integer> free = new HashMap<>(Map.of("nm3:1", 2, "nm1:1", 1, "nm0:1", 1));
    List<String> landed = new ArrayList<>();
    for (int k = 0; k < 5; k++) {
      landed.add(place(lookup.iterator(NODES, ""), free));
    }
    assertEquals(Arrays.asList("nm3:1", "nm3:1", "nm1:1", "nm0:1", null), landed);

    MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
    ObjectName on = new ObjectName(name);
    assertEquals(5L, jmx.getAttribute(on, "Lookups"));
    assertEquals(5L, jmx.getAttribute(on, "AdvisedDecisions"));
    assertEquals(1L, jmx.getAttribute(on, "Refreshes"));
    assertEquals(1L + 1 + 2 + 3 + 5, jmx.getAttribute(on, "NodesWalked"));
    assertEquals(2L, jmx.getAttribute(on, "FirstAdvisedNodeTaken"));
    assertEquals(3L, jmx.getAttribute(on, "AdvisedNodeTaken"));
    assertEquals(1L, jmx.getAttribute(on, "NonAdvisedNodeTaken"));
    assertEquals(1L, jmx.getAttribute(on, "NoNodeTaken"));
    assertEquals("1=2,2=1", jmx.getAttribute(on, "TakenPositions"));
    assertEquals(false, jmx.getAttribute(on, "Stale"));
  }

  @Test
  void staleEmptyAndFailingAdviceFallBackToHadoopsOrder() {
    ShimCounters decisions = new ShimCounters();
    LookupCounters lookups = new LookupCounters();
    NodeLookup<String> empty = new NodeLookup<>("short", client, decisions, lookups, s -> s,
        Comparator.<String>naturalOrder().reversed());
    empty.refresh(NODES, "");
    assertEquals("nm4:1", place(empty.iterator(NODES, ""), new HashMap<>(Map.of("nm4:1", 1))));
    assertEquals(1, decisions.fallbackCount("empty_ordering"));

    NodeLookup<String> failing = new NodeLookup<>("long", client, decisions, lookups, s -> {
      if (s.startsWith("nm2")) {
        throw new IllegalStateException("bad node");
      }
      return s;
    }, Comparator.naturalOrder());
    failing.refresh(Arrays.asList("nm3:1", "nm4:1"), "");
    assertEquals(Arrays.asList("nm3:1", "nm4:1"), new ArrayList<>(failing.nodes("")));
    failing.refresh(NODES, ""); // the key function throws for nm2 only when advice is consulted
    assertEquals(NODES, new ArrayList<>(failing.nodes("")), "Hadoop's order, no exception");
    failing.iterator(NODES, "");
    assertEquals(1, decisions.fallbackCount("error"));

    NodeLookup<String> lookup = new NodeLookup<>("long", client, decisions, lookups, s -> s,
        Comparator.naturalOrder());
    clock.addAndGet(6_000_000_000L); // unconfirmed for 6 s > 5 s
    lookup.refresh(NODES, "");
    assertEquals(NODES, new ArrayList<>(lookup.nodes("")));
    Iterator<String> it = lookup.iterator(NODES, "");
    assertEquals("nm0:1", it.next());
    assertEquals(1, decisions.fallbackCount("stale"));
    assertEquals(0, decisions.advisedCount());
  }

  @Test
  void aPartitionNotYetSortedIsOrderedOnTheLookup() {
    ShimCounters decisions = new ShimCounters();
    NodeLookup<String> lookup = new NodeLookup<>("long", client, decisions, new LookupCounters(), s -> s,
        Comparator.naturalOrder());
    assertTrue(lookup.nodes("gpu").isEmpty());
    assertEquals("nm3:1", lookup.iterator(NODES, "gpu").next());
    assertEquals(1, decisions.advisedCount());
  }
}
