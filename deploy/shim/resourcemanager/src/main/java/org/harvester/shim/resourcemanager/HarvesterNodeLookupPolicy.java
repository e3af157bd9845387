package org.harvester.shim.resourcemanager;

import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.MultiNodeLookupPolicy;
import org.harvester.shim.common.AdviceClient;
import org.harvester.shim.common.AdviceSettings;
import org.harvester.shim.common.NodeOrderer;
import org.harvester.shim.common.NodeOrderingAdvice;
import org.harvester.shim.common.ShimCounters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * YARN-H inside the CapacityScheduler: a {@code MultiNodeLookupPolicy} that orders a
 * partition's nodes by Harvester's advice for one job-length class of Algorithm 1 (OSDI'16
 * §4.1), from a locally cached table. The scheduler walks the returned order and places a
 * container on the first node with room, so the advised nodes fill first.
 *
 * <p>How Hadoop 3.3.6 uses it (CapacitySchedulerConfiguration, MultiNodeSortingManager,
 * MultiNodeSorter): each name in {@code yarn.scheduler.capacity.multi-node-sorting.policy.names}
 * maps to a class ({@code ...policy.<name>.class}); sorters are keyed by CLASS NAME and built
 * with {@code ReflectionUtils.newInstance(class, null)} (no configuration, no name), and a
 * queue picks a policy with {@code yarn.scheduler.capacity.<queue>.multi-node-sorting.policy}.
 * Hence one concrete subclass per job-length class ({@link HarvesterShortJobsNodeLookupPolicy},
 * {@link HarvesterMediumJobsNodeLookupPolicy}, {@link HarvesterLongJobsNodeLookupPolicy}); the sidecar address etc. come from yarn-site.xml
 * ({@code harvester.shim.resourcemanager.*}, docs/shim.md). The sorter thread calls
 * {@link #addAndRefreshNodesSet} every {@code sorting-interval.ms}: the order is computed
 * there, and {@link #getPreferredNodeIterator} (on the allocation path) only iterates it —
 * no remote call, no sort, no lock. Missing or stale advice: Hadoop's
 * ResourceUsageMultiNodeLookupPolicy order (least allocated first, then node id).
 */
public abstract class HarvesterNodeLookupPolicy<N extends SchedulerNode> implements MultiNodeLookupPolicy<N> {
  public static final String PREFIX = "harvester.shim.resourcemanager.";
  private static final Logger LOG = LoggerFactory.getLogger(HarvesterNodeLookupPolicy.class);
  private static final Map<String, AdviceClient<NodeOrderingAdvice>> CLIENTS = new HashMap<>();

  private final String jobType;
  private final AdviceClient<NodeOrderingAdvice> client;
  private final ShimCounters counters = new ShimCounters();
  private final Map<String, Set<N>> nodesPerPartition = new ConcurrentHashMap<>();

  protected HarvesterNodeLookupPolicy(String jobType) {
    this(jobType, yarnSite()::get);
  }

  HarvesterNodeLookupPolicy(String jobType, Function<String, String> conf) {
    this.jobType = jobType;
    this.client = sharedClient(AdviceSettings.from(conf, PREFIX));
    AdviceClient.registerMBean("Hadoop:service=ResourceManager,name=HarvesterNodeOrdering-" + jobType,
        client.mxBean(counters));
    if (!client.settings().enabled) {
      LOG.warn("{}advice.url is not set: node order for {} jobs is Hadoop's resource-usage order", PREFIX, jobType);
    }
  }

  private static Configuration yarnSite() {
    Configuration conf = new Configuration();
    conf.addResource("yarn-site.xml");
    return conf;
  }

  /** One refresher per sidecar URL, shared by the three policies of this ResourceManager. */
  private static synchronized AdviceClient<NodeOrderingAdvice> sharedClient(AdviceSettings s) {
    String key = s.enabled ? s.url.toString() : "";
    return CLIENTS.computeIfAbsent(key, k -> new AdviceClient<>("node-ordering", s, NodeOrderingAdvice::parse,
        a -> a.version, System::nanoTime).start());
  }

  public String jobType() {
    return jobType;
  }

  ShimCounters counters() {
    return counters;
  }

  AdviceClient<NodeOrderingAdvice> client() {
    return client;
  }

  /** The order: advised nodes first (advice order), the rest in Hadoop's resource-usage order. */
  List<N> order(Collection<N> nodes) {
    NodeOrderingAdvice advice = client.fresh();
    Map<String, Integer> ranks = advice == null ? Collections.emptyMap() : advice.ranks(jobType);
    if (ranks.isEmpty()) {
      counters.fallback(advice == null ? (client.current() == null ? "no_advice" : "stale") : "empty_ordering");
    } else {
      counters.advised();
    }
    return NodeOrderer.order(nodes, ranks, n -> n.getNodeID().toString(), resourceUsageOrder());
  }

  /** ResourceUsageMultiNodeLookupPolicy's comparator: allocated resource, then node id. */
  protected Comparator<N> resourceUsageOrder() {
    return (a, b) -> {
      int c = a.getAllocatedResource().compareTo(b.getAllocatedResource());
      return c != 0 ? c : a.getNodeID().compareTo(b.getNodeID());
    };
  }

  @Override
  public Iterator<N> getPreferredNodeIterator(Collection<N> nodes, String partition) {
    Set<N> sorted = nodesPerPartition.get(partition);
    return (sorted != null ? sorted : new LinkedHashSet<>(order(nodes))).iterator();
  }

  @Override
  public void addAndRefreshNodesSet(Collection<N> nodes, String partition) {
    nodesPerPartition.put(partition, Collections.unmodifiableSet(new LinkedHashSet<>(order(nodes))));
  }

  @Override
  public Set<N> getNodesPerPartition(String partition) {
    return nodesPerPartition.getOrDefault(partition, Collections.emptySet());
  }
}
