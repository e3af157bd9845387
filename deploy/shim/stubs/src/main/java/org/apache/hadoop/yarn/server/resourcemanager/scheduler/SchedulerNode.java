// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.yarn.server.resourcemanager.scheduler;

import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;

public abstract class SchedulerNode {
  public NodeId getNodeID() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public String getNodeName() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public synchronized Resource getAllocatedResource() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public synchronized Resource getUnallocatedResource() {
    throw new UnsupportedOperationException("compile-only stub");
  }
}
