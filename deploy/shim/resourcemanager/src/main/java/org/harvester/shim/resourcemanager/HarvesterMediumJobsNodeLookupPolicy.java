package org.harvester.shim.resourcemanager;

import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;

/** Node order for queues of medium jobs (periodic &gt; constant &gt; unpredictable). */
public class HarvesterMediumJobsNodeLookupPolicy<N extends SchedulerNode> extends HarvesterNodeLookupPolicy<N> {
  public HarvesterMediumJobsNodeLookupPolicy() {
    super("medium");
  }
}
