package org.harvester.shim.resourcemanager;

import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.Set;
import java.util.function.Function;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.MultiNodeLookupPolicy;
import org.harvester.shim.common.AdviceClient;
import org.harvester.shim.common.AdviceSettings;
import org.harvester.shim.common.HarvesterNodeOrderingMXBean;
import org.harvester.shim.common.NodeLookup;
import org.harvester.shim.common.NodeOrderingAdvice;
import org.harvester.shim.common.NodeOrderingBean;
import org.harvester.shim.common.SharedAdvice;
import org.harvester.shim.common.ShimCounters;

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
 *
 * <p>The logic is {@link NodeLookup}'s; this class adapts it to Hadoop's types. Every instance
 * of one job type (an RM that becomes active again builds new sorters) shares the advice
 * client and the JMX bean {@code Hadoop:service=ResourceManager,name=HarvesterNodeOrdering-<type>}
 * ({@link SharedAdvice}), whose lookup counters show where the scheduler's walks stopped.
 */
public abstract class HarvesterNodeLookupPolicy<N extends SchedulerNode> implements MultiNodeLookupPolicy<N> {
  public static final String PREFIX = "harvester.shim.resourcemanager.";
  public static final String MBEAN_PREFIX = "Hadoop:service=ResourceManager,name=HarvesterNodeOrdering-";

  private final String jobType;
  private final AdviceClient<NodeOrderingAdvice> client;
  private final NodeOrderingBean bean;
  private final NodeLookup<N> lookup;

  protected HarvesterNodeLookupPolicy(String jobType) {
    this(jobType, yarnSite()::get);
  }

  HarvesterNodeLookupPolicy(String jobType, Function<String, String> conf) {
    this.jobType = jobType;
    this.client = SharedAdvice.client("node-ordering", AdviceSettings.from(conf, PREFIX), NodeOrderingAdvice::parse,
        a -> a.version);
    this.bean = SharedAdvice.bean(MBEAN_PREFIX + jobType, client, NodeOrderingBean::new,
        HarvesterNodeOrderingMXBean.class);
    this.lookup = new NodeLookup<>(jobType, client, bean.counters(), bean.lookups(), n -> n.getNodeID().toString(),
        resourceUsageOrder());
  }

  private static Configuration yarnSite() {
    Configuration conf = new Configuration();
    conf.addResource("yarn-site.xml");
    return conf;
  }

  public String jobType() {
    return jobType;
  }

  ShimCounters counters() {
    return bean.counters();
  }

  AdviceClient<NodeOrderingAdvice> client() {
    return client;
  }

  /** ResourceUsageMultiNodeLookupPolicy's comparator: allocated resource, then node id. */
  private static <N extends SchedulerNode> Comparator<N> resourceUsageOrder() {
    return (a, b) -> {
      int c = a.getAllocatedResource().compareTo(b.getAllocatedResource());
      return c != 0 ? c : a.getNodeID().compareTo(b.getNodeID());
    };
  }

  @Override
  public Iterator<N> getPreferredNodeIterator(Collection<N> nodes, String partition) {
    return lookup.iterator(nodes, partition);
  }

  @Override
  public void addAndRefreshNodesSet(Collection<N> nodes, String partition) {
    lookup.refresh(nodes, partition);
  }

  @Override
  public Set<N> getNodesPerPartition(String partition) {
    return lookup.nodes(partition);
  }
}
