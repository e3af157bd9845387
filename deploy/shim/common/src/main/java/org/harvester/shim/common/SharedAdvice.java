package org.harvester.shim.common;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.StandardMBean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the plug-ins share per JVM: one {@link AdviceClient} per advice kind and URL, and one
 * JMX bean per name. Hadoop builds policy instances freely — the NameNode one per
 * {@code hdfs fsck} (NamenodeFsck: {@code new BlockPlacementPolicies}), the ResourceManager new
 * sorters whenever it becomes active — and never tells an instance it is done (neither
 * BlockPlacementPolicy nor MultiNodeLookupPolicy has a close). So clients and beans are kept
 * for the JVM's life: no reference count could ever reach zero safely, and the daemon's own
 * instance lives as long as the daemon anyway. Later instances reuse the client (no new thread,
 * no new connection) and add to the same counters.
 */
public final class SharedAdvice {
  private static final Logger LOG = LoggerFactory.getLogger(SharedAdvice.class);
  private static final Map<String, AdviceClient<?>> CLIENTS = new HashMap<>();
  private static final Map<String, ShimBean> BEANS = new HashMap<>();

  private SharedAdvice() {
  }

  /**
   * The started client of this kind and URL, created on first use. A later caller with other
   * settings for the same URL gets the first client (logged): a JVM's daemon has one configuration.
   */
  @SuppressWarnings("unchecked")
  public static synchronized <T> AdviceClient<T> client(String kind, AdviceSettings settings,
      Function<String, T> parser, ToLongFunction<T> versionOf) {
    String key = kind + " " + (settings.enabled ? settings.url : "disabled");
    AdviceClient<?> held = CLIENTS.get(key);
    if (held != null) {
      if (!held.settings().equals(settings)) {
        LOG.warn("Harvester advice {}: an instance asks for other settings; the first ones stay in force", key);
      }
      return (AdviceClient<T>) held;
    }
    AdviceClient<T> c = new AdviceClient<>(kind, settings, parser, versionOf, System::nanoTime);
    if (!settings.enabled) {
      LOG.warn("Harvester advice {}: no advice.url (or enabled=false): every decision is Hadoop's default", kind);
    }
    CLIENTS.put(key, c.start());
    return c;
  }

  /**
   * The bean registered under {@code objectName}, created and registered on first use; later
   * calls re-bind it to {@code client} and keep its counters. {@code make} builds a new bean.
   */
  @SuppressWarnings("unchecked")
  public static synchronized <B extends ShimBean> B bean(String objectName, AdviceClient<?> client,
      Function<AdviceClient<?>, B> make, Class<? super B> mxInterface) {
    ShimBean held = BEANS.get(objectName);
    if (held != null) {
      if (held.client() != client) {
        LOG.info("{} now reports advice from {}", objectName, client.settings().url);
        held.bind(client);
      }
      return (B) held;
    }
    B bean = make.apply(client);
    register(objectName, bean, mxInterface);
    BEANS.put(objectName, bean);
    return bean;
  }

  private static <B> void register(String objectName, B bean, Class<? super B> mxInterface) {
    try {
      MBeanServer server = ManagementFactory.getPlatformMBeanServer();
      ObjectName on = new ObjectName(objectName);
      if (server.isRegistered(on)) { // left by another class loader's copy of the plug-in
        server.unregisterMBean(on);
      }
      server.registerMBean(new StandardMBean(bean, mxInterface, true), on);
    } catch (JMException e) {
      LOG.warn("could not register {}: {}", objectName, e.toString());
    }
  }
}
