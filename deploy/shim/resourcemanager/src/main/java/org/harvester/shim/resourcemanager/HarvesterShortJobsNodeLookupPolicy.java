package org.harvester.shim.resourcemanager;

import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;

/** Node order for queues of short jobs (Algorithm 1 ranks unpredictable &gt; periodic &gt; constant classes). */
public class HarvesterShortJobsNodeLookupPolicy<N extends SchedulerNode> extends HarvesterNodeLookupPolicy<N> {
  public HarvesterShortJobsNodeLookupPolicy() {
    super("short");
  }
}
