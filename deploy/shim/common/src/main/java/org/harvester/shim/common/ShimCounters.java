package org.harvester.shim.common;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Decision counters of one plug-in: advised decisions and fallbacks by reason (cheap, lock-free). */
public final class ShimCounters {
  private final LongAdder advised = new LongAdder();
  private final ConcurrentHashMap<String, LongAdder> fallbacks = new ConcurrentHashMap<>();

  public void advised() {
    advised.increment();
  }

  public void fallback(String reason) {
    fallbacks.computeIfAbsent(reason, k -> new LongAdder()).increment();
  }

  public long advisedCount() {
    return advised.sum();
  }

  public long fallbackCount() {
    long n = 0;
    for (LongAdder a : fallbacks.values()) {
      n += a.sum();
    }
    return n;
  }

  public long fallbackCount(String reason) {
    LongAdder a = fallbacks.get(reason);
    return a == null ? 0 : a.sum();
  }

  /** "reason=count,..." sorted by reason (the JMX attribute FallbackReasons). */
  public String fallbackReasons() {
    Map<String, Long> sorted = new TreeMap<>();
    fallbacks.forEach((k, v) -> sorted.put(k, v.sum()));
    StringBuilder b = new StringBuilder();
    sorted.forEach((k, v) -> b.append(b.length() == 0 ? "" : ",").append(k).append('=').append(v));
    return b.toString();
  }
}
