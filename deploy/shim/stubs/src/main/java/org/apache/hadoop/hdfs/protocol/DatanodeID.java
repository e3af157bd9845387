// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.hdfs.protocol;

public class DatanodeID {
  public String getIpAddr() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public String getHostName() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public String getXferAddr() {
    throw new UnsupportedOperationException("compile-only stub");
  }
}
