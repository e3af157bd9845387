package org.harvester.shim.common;

/**
 * The JMX view of one plug-in: its advice client's state plus decision counters that every
 * instance of the plug-in in this JVM adds to ({@link SharedAdvice} registers it once). The
 * client is re-bound, never the counters, when a later instance brings another client.
 */
public class ShimBean implements HarvesterShimMXBean {
  private volatile AdviceClient<?> client;
  private final ShimCounters counters;

  public ShimBean(AdviceClient<?> client, ShimCounters counters) {
    this.client = client;
    this.counters = counters;
  }

  public ShimCounters counters() {
    return counters;
  }

  public AdviceClient<?> client() {
    return client;
  }

  void bind(AdviceClient<?> c) {
    client = c;
  }

  @Override
  public String getAdviceUrl() {
    AdviceSettings s = client.settings();
    return s.url == null ? "" : s.url.toString();
  }

  @Override
  public long getAdviceVersion() {
    return client.version();
  }

  @Override
  public long getAdviceAgeMs() {
    return client.ageMs();
  }

  @Override
  public boolean isStale() {
    return client.fresh() == null;
  }

  @Override
  public long getRequests() {
    return client.requests();
  }

  @Override
  public long getUpdates() {
    return client.updates();
  }

  @Override
  public long getNotModified() {
    return client.notModified();
  }

  @Override
  public long getFailures() {
    return client.failures();
  }

  @Override
  public long getRejectedDocuments() {
    return client.rejected();
  }

  @Override
  public String getLastError() {
    return client.lastError();
  }

  @Override
  public long getAdvisedDecisions() {
    return counters.advisedCount();
  }

  @Override
  public long getFallbacks() {
    return counters.fallbackCount();
  }

  @Override
  public String getFallbackReasons() {
    return counters.fallbackReasons();
  }
}
