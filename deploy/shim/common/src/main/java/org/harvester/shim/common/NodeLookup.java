package org.harvester.shim.common;

import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ResourceManager plug-in's logic with Hadoop's node type left open (so tests can use plain
 * values): the sorter's refresh computes a partition's order from the cached advice for one job
 * type (NodeOrderer: advised nodes first, then {@code fallback}, Hadoop's resource-usage order);
 * a lookup only walks the stored order, counted by {@link LookupCounters}. One decision per
 * lookup: advised when the order starts with advised nodes, else a fallback with the reason the
 * refresh found (disabled, no_advice, stale, empty_ordering, error).
 */
public final class NodeLookup<N> {
  private static final Logger LOG = LoggerFactory.getLogger(NodeLookup.class);

  /** One partition's order as last computed, with how many advised nodes lead it. */
  private static final class Order<N> {
    final Set<N> nodes;
    final int advised;
    final String fallback;

    Order(Set<N> nodes, int advised, String fallback) {
      this.nodes = nodes;
      this.advised = advised;
      this.fallback = fallback;
    }
  }

  private final String jobType;
  private final AdviceClient<NodeOrderingAdvice> client;
  private final ShimCounters decisions;
  private final LookupCounters lookups;
  private final Function<N, String> key;
  private final Comparator<? super N> fallback;
  private final Map<String, Order<N>> byPartition = new ConcurrentHashMap<>();
  private volatile String lastError = "";

  public NodeLookup(String jobType, AdviceClient<NodeOrderingAdvice> client, ShimCounters decisions,
      LookupCounters lookups, Function<N, String> key, Comparator<? super N> fallback) {
    this.jobType = jobType;
    this.client = client;
    this.decisions = decisions;
    this.lookups = lookups;
    this.key = key;
    this.fallback = fallback;
  }

  /** The sorter thread's call (addAndRefreshNodesSet). */
  public void refresh(Collection<N> nodes, String partition) {
    lookups.refreshed();
    byPartition.put(partition, order(nodes));
  }

  /** The scheduler's call (getPreferredNodeIterator): the stored order, or one computed now if none yet. */
  public Iterator<N> iterator(Collection<N> nodes, String partition) {
    Order<N> o = byPartition.get(partition);
    if (o == null) {
      o = order(nodes);
    }
    if (o.advised > 0) {
      decisions.advised();
    } else {
      decisions.fallback(o.fallback);
    }
    return lookups.track(o.nodes.iterator(), o.advised);
  }

  /** getNodesPerPartition: the stored order, empty for an unknown partition (as Hadoop's policies). */
  public Set<N> nodes(String partition) {
    Order<N> o = byPartition.get(partition);
    return o == null ? Collections.emptySet() : o.nodes;
  }

  private Order<N> order(Collection<N> nodes) {
    try {
      NodeOrderingAdvice advice = client.fresh();
      Map<String, Integer> ranks = advice == null ? Collections.emptyMap() : advice.ranks(jobType);
      Set<N> ordered = frozen(NodeOrderer.order(nodes, ranks, key, fallback));
      int advised = 0;
      for (N n : ordered) {
        if (!ranks.containsKey(key.apply(n))) {
          break;
        }
        advised++;
      }
      String why = !client.settings().enabled ? "disabled"
          : advice == null ? (client.current() == null ? "no_advice" : "stale") : "empty_ordering";
      return new Order<>(ordered, advised, why);
    } catch (RuntimeException e) { // never fail the scheduler because of the plug-in: Hadoop's order
      String msg = e.toString();
      if (!msg.equals(lastError)) {
        LOG.warn("Harvester node order for {} jobs failed, using Hadoop's order: {}", jobType, msg);
        lastError = msg;
      }
      return new Order<>(frozen(NodeOrderer.order(nodes, Collections.emptyMap(), key, fallback)), 0, "error");
    }
  }

  private static <N> Set<N> frozen(Collection<N> ordered) {
    return Collections.unmodifiableSet(new LinkedHashSet<>(ordered));
  }
}
