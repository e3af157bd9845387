// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.hdfs.server.blockmanagement;

import org.apache.hadoop.fs.StorageType;

public class DatanodeStorageInfo {
  public static final DatanodeStorageInfo[] EMPTY_ARRAY = {};

  DatanodeStorageInfo() {
  }

  public DatanodeDescriptor getDatanodeDescriptor() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public StorageType getStorageType() {
    throw new UnsupportedOperationException("compile-only stub");
  }
}
