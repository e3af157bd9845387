package org.harvester.shim.common;

/** {@link ShimBean} plus the lookup counters of a ResourceManager plug-in. */
public final class NodeOrderingBean extends ShimBean implements HarvesterNodeOrderingMXBean {
  private final LookupCounters lookups = new LookupCounters();

  public NodeOrderingBean(AdviceClient<?> client) {
    super(client, new ShimCounters());
  }

  public LookupCounters lookups() {
    return lookups;
  }

  @Override
  public long getRefreshes() {
    return lookups.refreshes();
  }

  @Override
  public long getLookups() {
    return lookups.lookups();
  }

  @Override
  public long getNodesWalked() {
    return lookups.nodesWalked();
  }

  @Override
  public long getAdvisedNodeTaken() {
    return lookups.advisedNodeTaken();
  }

  @Override
  public long getFirstAdvisedNodeTaken() {
    return lookups.firstAdvisedNodeTaken();
  }

  @Override
  public long getNonAdvisedNodeTaken() {
    return lookups.nonAdvisedNodeTaken();
  }

  @Override
  public long getNoNodeTaken() {
    return lookups.noNodeTaken();
  }

  @Override
  public String getTakenPositions() {
    return lookups.takenPositions();
  }
}
