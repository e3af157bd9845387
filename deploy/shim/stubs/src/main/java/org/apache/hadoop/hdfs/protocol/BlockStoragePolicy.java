// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.hdfs.protocol;

import java.util.List;
import org.apache.hadoop.fs.StorageType;

public class BlockStoragePolicy {
  public List<StorageType> chooseStorageTypes(short replication) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public String getName() {
    throw new UnsupportedOperationException("compile-only stub");
  }
}
