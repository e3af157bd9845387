// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.net;

import java.util.List;

public class NetworkTopology {
  public Node getNode(String loc) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public List<Node> getLeaves(String scope) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public boolean contains(Node node) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public int getNumOfRacks() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public int getNumOfLeaves() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public int getDistance(Node node1, Node node2) {
    throw new UnsupportedOperationException("compile-only stub");
  }
}
