package org.harvester.shim.resourcemanager;

import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;

/** Node order for queues of long jobs (constant &gt; periodic &gt; unpredictable). */
public class HarvesterLongJobsNodeLookupPolicy<N extends SchedulerNode> extends HarvesterNodeLookupPolicy<N> {
  public HarvesterLongJobsNodeLookupPolicy() {
    super("long");
  }
}
