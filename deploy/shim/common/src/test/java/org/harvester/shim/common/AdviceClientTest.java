package org.harvester.shim.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.ObjectName;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The advice client against a real HTTP server on loopback that speaks the sidecar's protocol
 * (harvester/advice/hdfs_http.py: ETag = version, If-None-Match -> 304, ?wait= long-poll).
 */
class AdviceClientTest {
  private HttpServer server;
  private volatile String body;
  private volatile long version;
  private volatile int forcedStatus;
  private final List<String> seen = Collections.synchronizedList(new ArrayList<>());
  private final Object changed = new Object();
  private final AtomicLong clock = new AtomicLong(1_000_000_000L);

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext("/v1/hdfs/placement-table", this::handle);
    server.start();
    publish(1, Tables.grid9(1, 1));
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  private void publish(long v, String doc) {
    synchronized (changed) {
      version = v;
      body = doc;
      changed.notifyAll();
    }
  }

  private void handle(HttpExchange ex) throws IOException {
    String inm = ex.getRequestHeaders().getFirst("If-None-Match");
    String query = ex.getRequestURI().getQuery();
    seen.add(query + " " + inm);
    if (forcedStatus != 0) {
      reply(ex, forcedStatus, "{\"error\":\"forced\"}");
      return;
    }
    long wait = Long.parseLong(query.replace("wait=", ""));
    String tag = "\"" + version + "\"";
    synchronized (changed) {
      long deadline = System.currentTimeMillis() + wait * 1000;
      while (tag.equals(inm) && System.currentTimeMillis() < deadline) {
        try {
          changed.wait(Math.max(1, deadline - System.currentTimeMillis()));
        } catch (InterruptedException e) {
          break;
        }
        tag = "\"" + version + "\"";
      }
    }
    if (tag.equals(inm)) {
      ex.getResponseHeaders().add("ETag", tag);
      ex.sendResponseHeaders(304, -1);
      ex.close();
      return;
    }
    ex.getResponseHeaders().add("ETag", tag);
    reply(ex, 200, body);
  }

  private static void reply(HttpExchange ex, int status, String text) throws IOException {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    ex.sendResponseHeaders(status, b.length);
    try (OutputStream os = ex.getResponseBody()) {
      os.write(b);
    }
  }

  private AdviceClient<PlacementIndex> client(long longPoll, long staleMs) {
    URI url = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/v1/hdfs/placement-table");
    AdviceSettings s = new AdviceSettings(true, url, staleMs, longPoll, 2000, 5000, 10, 40);
    return new AdviceClient<>("test", s, PlacementIndex::parse, ix -> ix.version, clock::get);
  }

  @Test
  void newVersionThenNotModifiedKeepsTheCopyFresh() {
    AdviceClient<PlacementIndex> c = client(0, 5000);
    assertNull(c.fresh());
    assertTrue(c.fetchOnce());
    assertEquals(1, c.fresh().version);
    clock.addAndGet(4_000_000_000L);
    assertTrue(c.fetchOnce(), "304 confirms the copy");
    assertEquals("wait=0 \"1\"", seen.get(1));
    clock.addAndGet(4_000_000_000L);
    assertNotNull(c.fresh(), "confirmed 4 s ago, bound 5 s");
    publish(2, Tables.grid9(2, 2));
    assertTrue(c.fetchOnce());
    assertEquals(18, c.fresh().n);
  }

  @Test
  void badDocumentKeepsTheLastGoodCopy() {
    AdviceClient<PlacementIndex> c = client(0, 5000);
    assertTrue(c.fetchOnce());
    publish(2, "{\"schema\":\"harvester.hdfs-placement.v1\",\"version\":2}");
    assertFalse(c.fetchOnce());
    assertEquals(1, c.current().version);
    HarvesterShimMXBean mx = c.mxBean(new ShimCounters());
    assertEquals(1, mx.getRejectedDocuments());
    assertTrue(mx.getLastError().contains("table.busy_cpu_threshold: missing"), mx.getLastError());
  }

  @Test
  void sidecarDownMakesTheCopyStaleAfterTheBound() {
    AdviceClient<PlacementIndex> c = client(0, 5000);
    assertTrue(c.fetchOnce());
    server.stop(0);
    clock.addAndGet(3_000_000_000L);
    assertFalse(c.fetchOnce());
    assertNotNull(c.fresh(), "still within the bound");
    clock.addAndGet(3_000_000_000L);
    assertFalse(c.fetchOnce());
    assertNull(c.fresh(), "6 s without confirmation > 5 s bound");
    assertTrue(c.mxBean(new ShimCounters()).isStale());
    assertEquals(1, c.current().version, "the last good copy is still held");
  }

  @Test
  void errorsAreFailuresNotCopies() {
    AdviceClient<PlacementIndex> c = client(0, 5000);
    forcedStatus = 503;
    assertFalse(c.fetchOnce());
    assertNull(c.current());
    assertTrue(c.mxBean(new ShimCounters()).getLastError().startsWith("HTTP 503"));
  }

  @Test
  void backgroundLongPollPicksUpAPublishedVersion() throws Exception {
    clock.set(0);
    AdviceClient<PlacementIndex> c = client(1, 10_000).start();
    try {
      waitFor(() -> c.current() != null && c.current().version == 1);
      publish(9, Tables.grid9(9, 1));
      waitFor(() -> c.current().version == 9);
      assertTrue(seen.stream().anyMatch(s -> s.equals("wait=1 \"1\"")), seen.toString());
    } finally {
      c.close();
    }
  }

  @Test
  void mbeanIsRegisteredOnThePlatformServer() throws Exception {
    AdviceClient<PlacementIndex> c = client(0, 5000);
    ShimCounters counters = new ShimCounters();
    counters.fallback("stale");
    counters.fallback("stale");
    counters.fallback("flags");
    SharedAdvice.bean("Hadoop:service=Test,name=HarvesterShimTest", c, x -> new ShimBean(x, counters),
        HarvesterShimMXBean.class);
    ObjectName on = new ObjectName("Hadoop:service=Test,name=HarvesterShimTest");
    assertEquals("flags=1,stale=2", ManagementFactory.getPlatformMBeanServer().getAttribute(on, "FallbackReasons"));
    assertEquals(true, ManagementFactory.getPlatformMBeanServer().getAttribute(on, "Stale"));
  }

  private static void waitFor(java.util.function.BooleanSupplier cond) throws InterruptedException {
    long deadline = System.nanoTime() + 20_000_000_000L; // generous: an event bound, not a speed claim
    while (!cond.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "condition not reached");
      Thread.sleep(20);
    }
  }
}
