package org.harvester.shim.common;

/**
 * The ResourceManager plug-in's JMX view: the advice client and decisions (one decision = one
 * lookup the scheduler made: AdvisedDecisions in an advised order, Fallbacks in Hadoop's), plus
 * what the scheduler took from each lookup ({@link LookupCounters}; docs/shim.md).
 */
public interface HarvesterNodeOrderingMXBean extends HarvesterShimMXBean {
  /** Orders the sorter thread computed (addAndRefreshNodesSet calls). */
  long getRefreshes();

  /** Node iterators handed to the scheduler (getPreferredNodeIterator calls). */
  long getLookups();

  /** Nodes the scheduler took from those iterators, in total. */
  long getNodesWalked();

  /** Lookups whose walk stopped (a container allocated or reserved) on an advised node. */
  long getAdvisedNodeTaken();

  /** ... on the first node of the advised order. */
  long getFirstAdvisedNodeTaken();

  /** ... on a node the advice did not name (every stop of a lookup in Hadoop's order). */
  long getNonAdvisedNodeTaken();

  /** Lookups that walked every node: nothing fit. */
  long getNoNodeTaken();

  /** Position buckets of the advised nodes taken, "1=40,2=3,5-8=1". */
  String getTakenPositions();
}
