// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.net;

public interface Node {
  String getNetworkLocation();

  void setNetworkLocation(String location);

  String getName();

  Node getParent();

  void setParent(Node parent);

  int getLevel();

  void setLevel(int i);
}
