// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.fs;

public enum StorageType {
  RAM_DISK, SSD, DISK, ARCHIVE, PROVIDED;

  public static final StorageType DEFAULT = DISK;
}
