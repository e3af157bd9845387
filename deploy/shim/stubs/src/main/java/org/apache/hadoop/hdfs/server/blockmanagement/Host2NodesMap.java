// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
// Package-private in Hadoop: a plug-in outside this package cannot name it, hence cannot
// override initialize(...) (fixtures README).
package org.apache.hadoop.hdfs.server.blockmanagement;

class Host2NodesMap {
}
