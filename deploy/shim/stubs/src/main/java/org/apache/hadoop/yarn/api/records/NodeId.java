// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.yarn.api.records;

public abstract class NodeId implements Comparable<NodeId> {
  public abstract String getHost();

  public abstract int getPort();

  @Override
  public int compareTo(NodeId other) {
    throw new UnsupportedOperationException("compile-only stub");
  }
}
