// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.yarn.api.records;

public abstract class Resource implements Comparable<Resource> {
  public long getMemorySize() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public abstract int getVirtualCores();

  @Override
  public int compareTo(Resource other) {
    throw new UnsupportedOperationException("compile-only stub");
  }
}
