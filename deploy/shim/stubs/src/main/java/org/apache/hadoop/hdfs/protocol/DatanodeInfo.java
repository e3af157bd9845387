// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.hdfs.protocol;

import org.apache.hadoop.net.Node;

public class DatanodeInfo extends DatanodeID implements Node {
  public String getName() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public String getNetworkLocation() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public void setNetworkLocation(String location) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public Node getParent() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public void setParent(Node parent) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public int getLevel() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public void setLevel(int level) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public boolean isInService() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public boolean isStale(long staleInterval) {
    throw new UnsupportedOperationException("compile-only stub");
  }
}
