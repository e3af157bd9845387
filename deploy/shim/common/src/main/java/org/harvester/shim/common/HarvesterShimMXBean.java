package org.harvester.shim.common;

/**
 * What a plug-in reports through JMX. Hadoop's daemons serve every platform MBean at
 * {@code /jmx}: e.g. {@code http://namenode:9870/jmx?qry=Hadoop:service=NameNode,name=HarvesterPlacementPolicy}.
 */
public interface HarvesterShimMXBean {
  String getAdviceUrl();

  /** Version of the cached advice, -1 when none was ever received. */
  long getAdviceVersion();

  /** Milliseconds since the sidecar last confirmed the cached copy (-1: never). */
  long getAdviceAgeMs();

  /** True when there is no copy or it is older than the staleness bound: decisions fall back. */
  boolean isStale();

  long getRequests();

  long getUpdates();

  long getNotModified();

  long getFailures();

  long getRejectedDocuments();

  String getLastError();

  long getAdvisedDecisions();

  long getFallbacks();

  String getFallbackReasons();
}
