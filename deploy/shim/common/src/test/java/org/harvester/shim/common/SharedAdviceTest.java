package org.harvester.shim.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.lang.management.ManagementFactory;
import java.net.URI;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

/** One client per JVM, kind and URL; one bean per name, never replaced. */
class SharedAdviceTest {
  private static AdviceSettings settings(String url, long staleMs) {
    return new AdviceSettings(true, URI.create(url), staleMs, 1, 2000, 5000, 500, 30000);
  }

  private static long threads(String name) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name)).count();
  }

  @Test
  void oneClientAndThreadPerKindAndUrl() {
    String url = "http://127.0.0.1:9/shared/one";
    AdviceClient<NodeOrderingAdvice> a = SharedAdvice.client("node-ordering", settings(url, 60000),
        NodeOrderingAdvice::parse, x -> x.version);
    AdviceClient<NodeOrderingAdvice> b = SharedAdvice.client("node-ordering", settings(url, 9000),
        NodeOrderingAdvice::parse, x -> x.version);
    assertSame(a, b, "same URL: the first client, whatever the later settings");
    assertEquals(60000, b.settings().staleAfterMs);
    assertEquals(1, threads(a.threadName()));
    AdviceClient<PlacementIndex> other = SharedAdvice.client("placement-table", settings(url, 60000),
        PlacementIndex::parse, x -> x.version);
    assertNotSame(a, other, "another kind is another document");
  }

  @Test
  void theBeanIsRegisteredOnceAndKeepsItsCounters() throws Exception {
    String name = "Hadoop:service=Test,name=HarvesterShared";
    AdviceClient<PlacementIndex> first = SharedAdvice.client("placement-table",
        settings("http://127.0.0.1:9/shared/first", 60000), PlacementIndex::parse, x -> x.version);
    ShimBean bean = SharedAdvice.bean(name, first, c -> new ShimBean(c, new ShimCounters()),
        HarvesterShimMXBean.class);
    bean.counters().advised();
    AdviceClient<PlacementIndex> second = SharedAdvice.client("placement-table",
        settings("http://127.0.0.1:9/shared/second", 60000), PlacementIndex::parse, x -> x.version);
    ShimBean again = SharedAdvice.bean(name, second, c -> new ShimBean(c, new ShimCounters()),
        HarvesterShimMXBean.class);
    assertSame(bean, again);
    again.counters().advised();
    ObjectName on = new ObjectName(name);
    assertEquals(2L, ManagementFactory.getPlatformMBeanServer().getAttribute(on, "AdvisedDecisions"));
    assertEquals("http://127.0.0.1:9/shared/second",
        ManagementFactory.getPlatformMBeanServer().getAttribute(on, "AdviceUrl"), "re-bound to the newer client");
  }
}
