package org.harvester.shim.common;

import java.net.URI;
import java.util.Objects;
import java.util.function.Function;

/**
 * How a plug-in reaches the sidecar's HTTP advice face and when it stops trusting its copy.
 * Read from Hadoop configuration keys under a prefix ({@code harvester.shim.namenode.} in
 * hdfs-site.xml, {@code harvester.shim.resourcemanager.} in yarn-site.xml; docs/shim.md lists
 * them): {@code advice.url} (required to take advice at all), {@code stale.after.ms},
 * {@code long.poll.seconds}, {@code connect.timeout.ms}, {@code read.timeout.ms},
 * {@code backoff.min.ms}, {@code backoff.max.ms}, {@code enabled}. A bad value is a
 * configuration error naming the key (the daemon refuses to start, as Hadoop does for its own keys).
 */
public final class AdviceSettings {
  public final boolean enabled;
  public final URI url;
  public final long staleAfterMs;
  public final long longPollSeconds;
  public final long connectTimeoutMs;
  public final long readTimeoutMs;
  public final long backoffMinMs;
  public final long backoffMaxMs;

  public AdviceSettings(boolean enabled, URI url, long staleAfterMs, long longPollSeconds, long connectTimeoutMs,
      long readTimeoutMs, long backoffMinMs, long backoffMaxMs) {
    this.enabled = enabled && url != null;
    this.url = url;
    this.staleAfterMs = staleAfterMs;
    // A long-poll holds the copy unconfirmed for its whole wait: keep it well inside the bound.
    this.longPollSeconds = Math.max(0, Math.min(longPollSeconds, staleAfterMs / 2000));
    this.connectTimeoutMs = connectTimeoutMs;
    this.readTimeoutMs = readTimeoutMs;
    this.backoffMinMs = backoffMinMs;
    this.backoffMaxMs = Math.max(backoffMinMs, backoffMaxMs);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof AdviceSettings)) {
      return false;
    }
    AdviceSettings s = (AdviceSettings) o;
    return enabled == s.enabled && Objects.equals(url, s.url) && staleAfterMs == s.staleAfterMs
        && longPollSeconds == s.longPollSeconds && connectTimeoutMs == s.connectTimeoutMs
        && readTimeoutMs == s.readTimeoutMs && backoffMinMs == s.backoffMinMs && backoffMaxMs == s.backoffMaxMs;
  }

  @Override
  public int hashCode() {
    return Objects.hash(enabled, url, staleAfterMs, longPollSeconds, connectTimeoutMs, readTimeoutMs, backoffMinMs,
        backoffMaxMs);
  }

  /** Parse the keys under {@code prefix} from a lookup (Hadoop's {@code Configuration::get}). */
  public static AdviceSettings from(Function<String, String> conf, String prefix) {
    String rawUrl = trimmed(conf.apply(prefix + "advice.url"));
    URI url = null;
    if (rawUrl != null) {
      try {
        url = URI.create(rawUrl);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(prefix + "advice.url: not a URL: " + rawUrl);
      }
      if (!"http".equals(url.getScheme()) && !"https".equals(url.getScheme())) {
        throw new IllegalArgumentException(prefix + "advice.url: expected http:// or https://, got " + rawUrl);
      }
    }
    return new AdviceSettings(
        bool(conf, prefix + "enabled", true), url,
        positive(conf, prefix + "stale.after.ms", 60_000L),
        nonNegative(conf, prefix + "long.poll.seconds", 20L),
        positive(conf, prefix + "connect.timeout.ms", 2_000L),
        positive(conf, prefix + "read.timeout.ms", 5_000L),
        positive(conf, prefix + "backoff.min.ms", 500L),
        positive(conf, prefix + "backoff.max.ms", 30_000L));
  }

  static String trimmed(String v) {
    if (v == null) {
      return null;
    }
    String t = v.trim();
    return t.isEmpty() ? null : t;
  }

  public static boolean bool(Function<String, String> conf, String key, boolean dflt) {
    String v = trimmed(conf.apply(key));
    if (v == null) {
      return dflt;
    }
    if (v.equalsIgnoreCase("true")) {
      return true;
    }
    if (v.equalsIgnoreCase("false")) {
      return false;
    }
    throw new IllegalArgumentException(key + ": expected true or false, got " + v);
  }

  public static long nonNegative(Function<String, String> conf, String key, long dflt) {
    String v = trimmed(conf.apply(key));
    if (v == null) {
      return dflt;
    }
    try {
      long x = Long.parseLong(v);
      if (x >= 0) {
        return x;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(key + ": expected an integer >= 0, got " + v);
  }

  public static long positive(Function<String, String> conf, String key, long dflt) {
    long x = nonNegative(conf, key, dflt);
    if (x == 0) {
      throw new IllegalArgumentException(key + ": expected an integer > 0, got 0");
    }
    return x;
  }
}
