package org.harvester.shim.common;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a local copy of one advice document and refreshes it in the background: a daemon
 * thread long-polls the sidecar ({@code GET url?wait=S} with {@code If-None-Match: "v"}; 200 =
 * a new version, 304 = still current), backs off exponentially on failures, and never lets a
 * bad answer replace the last good copy. Hot paths only read {@link #current()}: a volatile
 * field, no I/O, no lock. The copy is stale when the sidecar has not confirmed it for longer
 * than the bound: callers then fall back to Hadoop's default behaviour.
 *
 * <p>Uses only the JDK's {@code java.net.http} client: the plug-ins bring no jars of their own.
 * Plug-ins take theirs from {@link SharedAdvice}: one client (one thread, one connection) per
 * JVM, kind and URL, however many policy instances Hadoop builds.
 */
public final class AdviceClient<T> implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AdviceClient.class);

  /** A copy and when the sidecar last confirmed it (monotonic nanoseconds). */
  public static final class Snapshot<T> {
    public final T value;
    public final long version;
    public final long confirmedNanos;

    Snapshot(T value, long version, long confirmedNanos) {
      this.value = value;
      this.version = version;
      this.confirmedNanos = confirmedNanos;
    }
  }

  private final String name;
  private final AdviceSettings settings;
  private final Function<String, T> parser;
  private final ToLongFunction<T> versionOf;
  private final LongSupplier nanos;
  private final HttpClient http;
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong updates = new AtomicLong();
  private final AtomicLong notModified = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private final AtomicLong rejected = new AtomicLong();
  private volatile Snapshot<T> snapshot;
  private volatile String lastError = "";
  private volatile boolean running;
  private volatile boolean reportedStale = true;
  private Thread thread;

  public AdviceClient(String name, AdviceSettings settings, Function<String, T> parser, ToLongFunction<T> versionOf,
      LongSupplier nanos) {
    this.name = name;
    this.settings = settings;
    this.parser = parser;
    this.versionOf = versionOf;
    this.nanos = nanos;
    this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofMillis(settings.connectTimeoutMs)).build();
  }

  public AdviceSettings settings() {
    return settings;
  }

  /** Start the background refresher (a daemon thread); a no-op when advice is disabled. */
  public synchronized AdviceClient<T> start() {
    if (running || !settings.enabled) {
      return this;
    }
    running = true;
    thread = new Thread(this::run, threadName());
    thread.setDaemon(true);
    thread.start();
    return this;
  }

  @Override
  public synchronized void close() {
    running = false;
    if (thread != null) {
      thread.interrupt();
      thread = null;
    }
  }

  /** The last good copy, or null; never blocks. */
  public Snapshot<T> current() {
    return snapshot;
  }

  /** The copy when the sidecar confirmed it within the staleness bound, else null. */
  public T fresh() {
    Snapshot<T> s = snapshot;
    if (s == null || nanos.getAsLong() - s.confirmedNanos > settings.staleAfterMs * 1_000_000L) {
      return null;
    }
    return s.value;
  }

  public long ageMs() {
    Snapshot<T> s = snapshot;
    return s == null ? -1 : (nanos.getAsLong() - s.confirmedNanos) / 1_000_000L;
  }

  private void run() {
    long backoff = settings.backoffMinMs;
    while (running) {
      long before = notModified.get();
      long started = nanos.getAsLong();
      boolean ok = fetchOnce();
      noteStaleness();
      long delay = ok ? 0 : backoff;
      backoff = ok ? settings.backoffMinMs : Math.min(settings.backoffMaxMs, backoff * 2);
      // A 304 that did not wait (no long-poll, or a server that does not hold requests) would
      // make this loop spin: poll at the backoff floor instead.
      boolean quick304 = ok && notModified.get() > before
          && nanos.getAsLong() - started < settings.longPollSeconds * 500_000_000L;
      if (quick304 || (ok && settings.longPollSeconds == 0)) {
        delay = settings.backoffMinMs;
      }
      if (delay > 0) {
        try {
          Thread.sleep(delay);
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  /** One request; true when the sidecar answered with a usable copy (200) or confirmed ours (304). */
  public boolean fetchOnce() {
    Snapshot<T> held = snapshot;
    String base = settings.url.toString();
    URI uri = URI.create(base + (base.contains("?") ? "&" : "?") + "wait=" + settings.longPollSeconds);
    HttpRequest.Builder req = HttpRequest.newBuilder(uri).GET()
        .timeout(Duration.ofMillis(settings.longPollSeconds * 1000L + settings.readTimeoutMs))
        .header("Accept", "application/json");
    if (held != null) {
      req.header("If-None-Match", "\"" + held.version + "\"");
    }
    requests.incrementAndGet();
    HttpResponse<String> resp;
    try {
      resp = http.send(req.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      return fail("request failed: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
    long now = nanos.getAsLong();
    if (resp.statusCode() == 304 && held != null) {
      notModified.incrementAndGet();
      snapshot = new Snapshot<>(held.value, held.version, now);
      return true;
    }
    if (resp.statusCode() != 200) {
      String body = resp.body() == null ? "" : resp.body();
      return fail("HTTP " + resp.statusCode() + ": " + body.substring(0, Math.min(200, body.length())).trim());
    }
    T value;
    try {
      value = parser.apply(resp.body());
    } catch (RuntimeException e) {
      rejected.incrementAndGet();
      return fail("rejected document (last good copy kept): " + e.getMessage());
    }
    long version = versionOf.applyAsLong(value);
    if (held == null || held.version != version) {
      LOG.info("Harvester advice {}: version {} from {}", name, version, settings.url);
    }
    updates.incrementAndGet();
    snapshot = new Snapshot<>(value, version, now);
    return true;
  }

  private boolean fail(String why) {
    failures.incrementAndGet();
    if (!why.equals(lastError)) {
      LOG.warn("Harvester advice {} from {}: {}", name, settings.url, why);
    }
    lastError = why;
    return false;
  }

  private void noteStaleness() {
    boolean stale = fresh() == null;
    if (stale != reportedStale) {
      reportedStale = stale;
      if (stale) {
        LOG.warn("Harvester advice {} is stale (age {} ms > {} ms): falling back to Hadoop's default policy",
            name, ageMs(), settings.staleAfterMs);
      } else {
        LOG.info("Harvester advice {} is fresh again (version {})", name, snapshot.version);
      }
    }
  }

  /** The name of the refresher thread (also its jstack name): kind and URL. */
  public String threadName() {
    return "harvester-advice-" + name + " " + settings.url;
  }

  public long version() {
    Snapshot<T> s = snapshot;
    return s == null ? -1 : s.version;
  }

  public long requests() {
    return requests.get();
  }

  public long updates() {
    return updates.get();
  }

  public long notModified() {
    return notModified.get();
  }

  public long failures() {
    return failures.get();
  }

  public long rejected() {
    return rejected.get();
  }

  public String lastError() {
    return lastError;
  }

  /** The JMX view of this client plus a plug-in's decision counters (not registered). */
  public HarvesterShimMXBean mxBean(ShimCounters counters) {
    return new ShimBean(this, counters);
  }
}
