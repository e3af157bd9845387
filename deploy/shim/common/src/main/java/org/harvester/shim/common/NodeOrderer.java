package org.harvester.shim.common;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Orders a partition's nodes for the CapacityScheduler's multi-node lookup: the nodes the
 * advice ranks come first, in the advice's order; every other node follows in the fallback
 * order (Hadoop's own ResourceUsageMultiNodeLookupPolicy order: least allocated first, then
 * node id). Without advice (missing, stale, or empty for this job type) the result is exactly
 * the fallback order. Pure: the caller says how to name a node and what the fallback is.
 */
public final class NodeOrderer {
  private NodeOrderer() {
  }

  public static <N> List<N> order(Collection<N> nodes, Map<String, Integer> ranks, Function<N, String> key,
      Comparator<? super N> fallback) {
    List<N> out = new ArrayList<>(nodes);
    if (ranks.isEmpty()) {
      out.sort(fallback);
      return out;
    }
    // rank computed once per node, then a stable sort: advised by rank, the rest by fallback
    Map<N, Integer> rank = new java.util.IdentityHashMap<>();
    for (N n : out) {
      Integer r = ranks.get(key.apply(n));
      rank.put(n, r == null ? Integer.MAX_VALUE : r);
    }
    out.sort((a, b) -> {
      int ra = rank.get(a);
      int rb = rank.get(b);
      if (ra != rb) {
        return Integer.compare(ra, rb);
      }
      return ra == Integer.MAX_VALUE ? fallback.compare(a, b) : 0;
    });
    return out;
  }
}
