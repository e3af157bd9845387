// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement;

import java.util.Collection;
import java.util.Iterator;
import java.util.Set;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;

public interface MultiNodeLookupPolicy<N extends SchedulerNode> {
  Iterator<N> getPreferredNodeIterator(Collection<N> nodes, String partition);

  void addAndRefreshNodesSet(Collection<N> nodes, String partition);

  Set<N> getNodesPerPartition(String partition);
}
