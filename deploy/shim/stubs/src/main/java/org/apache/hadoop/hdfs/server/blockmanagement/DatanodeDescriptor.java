// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.hdfs.server.blockmanagement;

import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;

public class DatanodeDescriptor extends DatanodeInfo {
  public boolean isAlive() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public DatanodeStorageInfo chooseStorage4Block(StorageType t, long blockSize) {
    throw new UnsupportedOperationException("compile-only stub");
  }
}
