// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.hdfs;

public enum AddBlockFlag {
  NO_LOCAL_WRITE, IGNORE_CLIENT_LOCALITY, NO_LOCAL_RACK
}
