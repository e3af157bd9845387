package org.harvester.shim.namenode;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;
import java.util.function.Function;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.AddBlockFlag;
import org.apache.hadoop.hdfs.protocol.BlockStoragePolicy;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicyDefault;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementStatus;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeStorageInfo;
import org.apache.hadoop.net.Node;
import org.harvester.shim.common.AdviceClient;
import org.harvester.shim.common.AdviceSettings;
import org.harvester.shim.common.Algorithm2;
import org.harvester.shim.common.HarvesterShimMXBean;
import org.harvester.shim.common.PlacementIndex;
import org.harvester.shim.common.ReplicaRules;
import org.harvester.shim.common.SharedAdvice;
import org.harvester.shim.common.ShimBean;
import org.harvester.shim.common.ShimCounters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HDFS-H inside the NameNode ({@code dfs.block.replicator.classname}): chooseTarget places a
 * block's replicas by Algorithm 2 (OSDI'16 §4.2) over a locally cached placement table;
 * verifyBlockPlacement, chooseReplicasToDelete and isMovable follow the same grid. Whenever
 * the table is missing, stale, or cannot satisfy the request, the call is answered by
 * {@link BlockPlacementPolicyDefault} itself: a sidecar that is down or slow never fails a
 * write and never slows one (chooseTarget runs inside every addBlock RPC and does no I/O).
 *
 * <p>Hadoop builds the policy with {@code ReflectionUtils.newInstance(class, conf)}, which
 * calls {@link #setConf} before {@code initialize}; a subclass outside Hadoop's package cannot
 * override {@code initialize} (its Host2NodesMap parameter is package-private), so the
 * configuration arrives through {@link Configurable}. Counters: JMX
 * {@code Hadoop:service=NameNode,name=HarvesterPlacementPolicy} (served at {@code /jmx}).
 */
public class HarvesterBlockPlacementPolicy extends BlockPlacementPolicyDefault implements Configurable {
  public static final String PREFIX = "harvester.shim.namenode.";
  public static final String VERIFY_GRID = PREFIX + "verify.grid";
  public static final String DELETE_GRID = PREFIX + "delete.grid";
  public static final String MBEAN = "Hadoop:service=NameNode,name=HarvesterPlacementPolicy";
  private static final Logger LOG = LoggerFactory.getLogger(HarvesterBlockPlacementPolicy.class);
  private static final int ROUNDS = 3; // Algorithm 2 reruns after the NameNode rejects a table pick

  private Configuration conf;
  private volatile AdviceClient<PlacementIndex> client;
  private volatile ShimCounters counters = new ShimCounters(); // the shared bean's once configured
  private final DatanodeResolver resolver = new DatanodeResolver();
  private volatile String lastFailure = "";
  private boolean verifyGrid = true;
  private boolean deleteGrid = true;
  private boolean avoidStaleForWrite;
  private long staleIntervalMs = 30_000L;

  public HarvesterBlockPlacementPolicy() {
  }

  @Override
  public void setConf(Configuration conf) {
    this.conf = conf;
    configure(conf::get);
  }

  @Override
  public Configuration getConf() {
    return conf;
  }

  /**
   * Read the keys (docs/shim.md) and take the JVM's table refresher and JMX bean
   * ({@link SharedAdvice}): Hadoop builds an instance per {@code hdfs fsck} besides the
   * BlockManager's, and never closes one, so instances share one thread and one bean.
   */
  synchronized void configure(Function<String, String> lookup) {
    AdviceSettings settings = AdviceSettings.from(lookup, PREFIX);
    verifyGrid = AdviceSettings.bool(lookup, VERIFY_GRID, true);
    deleteGrid = AdviceSettings.bool(lookup, DELETE_GRID, true);
    avoidStaleForWrite = AdviceSettings.bool(lookup, "dfs.namenode.avoid.write.stale.datanode", false);
    staleIntervalMs = AdviceSettings.positive(lookup, "dfs.namenode.stale.datanode.interval", 30_000L);
    client = SharedAdvice.client("placement-table", settings, PlacementIndex::parse, ix -> ix.version);
    counters = SharedAdvice.bean(MBEAN, client, c -> new ShimBean(c, new ShimCounters()), HarvesterShimMXBean.class)
        .counters();
  }

  ShimCounters counters() {
    return counters;
  }

  AdviceClient<PlacementIndex> client() {
    return client;
  }

  /** The cached table when fresh, else null (and the fallback is counted under {@code why}). */
  private PlacementIndex table(String why) {
    AdviceClient<PlacementIndex> c = client;
    PlacementIndex ix = c == null ? null : c.fresh();
    if (ix == null) {
      counters.fallback(c == null || !c.settings().enabled ? "disabled" : c.current() == null ? "no_table" : why);
    }
    return ix;
  }

  @Override
  public DatanodeStorageInfo[] chooseTarget(String srcPath, int numOfReplicas, Node writer,
      List<DatanodeStorageInfo> chosen, boolean returnChosenNodes, Set<Node> excludedNodes, long blocksize,
      BlockStoragePolicy storagePolicy, EnumSet<AddBlockFlag> flags) {
    DatanodeStorageInfo[] advised = null;
    try {
      advised = advisedTargets(numOfReplicas, writer, chosen, returnChosenNodes, excludedNodes, blocksize,
          storagePolicy, flags);
    } catch (RuntimeException e) { // never fail a write because of the plug-in
      counters.fallback("error");
      LOG.warn("Harvester placement failed for {}, using the default policy: {}", srcPath, e.toString());
    }
    return advised != null ? advised : defaultChooseTarget(srcPath, numOfReplicas, writer, chosen,
        returnChosenNodes, excludedNodes, blocksize, storagePolicy, flags);
  }

  @Override
  public DatanodeStorageInfo[] chooseTarget(String srcPath, int numOfReplicas, Node writer,
      List<DatanodeStorageInfo> chosen, boolean returnChosenNodes, Set<Node> excludedNodes, long blocksize,
      BlockStoragePolicy storagePolicy, EnumSet<AddBlockFlag> flags, EnumMap<StorageType, Integer> storageTypes) {
    if (storageTypes == null) {
      return chooseTarget(srcPath, numOfReplicas, writer, chosen, returnChosenNodes, excludedNodes, blocksize,
          storagePolicy, flags);
    }
    counters.fallback("storage_types");
    return super.chooseTarget(srcPath, numOfReplicas, writer, chosen, returnChosenNodes, excludedNodes, blocksize,
        storagePolicy, flags, storageTypes);
  }

  /** Hadoop's own choice (a seam for tests, which cannot run the real default policy). */
  protected DatanodeStorageInfo[] defaultChooseTarget(String srcPath, int numOfReplicas, Node writer,
      List<DatanodeStorageInfo> chosen, boolean returnChosenNodes, Set<Node> excludedNodes, long blocksize,
      BlockStoragePolicy storagePolicy, EnumSet<AddBlockFlag> flags) {
    return super.chooseTarget(srcPath, numOfReplicas, writer, chosen, returnChosenNodes, excludedNodes, blocksize,
        storagePolicy, flags);
  }

  /** Algorithm 2's targets as the NameNode's storages, or null (fallback reason counted). */
  DatanodeStorageInfo[] advisedTargets(int numOfReplicas, Node writer, List<DatanodeStorageInfo> chosen,
      boolean returnChosenNodes, Set<Node> excludedNodes, long blocksize, BlockStoragePolicy storagePolicy,
      EnumSet<AddBlockFlag> flags) {
    if (numOfReplicas <= 0) {
      counters.fallback("nothing_to_choose");
      return null;
    }
    if (flags != null && !flags.isEmpty()) { // NO_LOCAL_WRITE / NO_LOCAL_RACK / IGNORE_CLIENT_LOCALITY
      counters.fallback("flags");
      return null;
    }
    PlacementIndex ix = table("stale");
    if (ix == null) {
      return null;
    }
    List<StorageType> types = storagePolicy.chooseStorageTypes((short) (numOfReplicas + chosen.size()));
    if (types.isEmpty() || new HashSet<>(types).size() != 1) {
      counters.fallback("storage_policy");
      return null;
    }
    StorageType type = types.get(0);
    List<String> chosenNames = new ArrayList<>(chosen.size());
    for (DatanodeStorageInfo s : chosen) {
      chosenNames.add(s.getDatanodeDescriptor().getName());
    }
    List<String> excludedNames = new ArrayList<>();
    if (excludedNodes != null) {
      for (Node n : excludedNodes) {
        excludedNames.add(n.getName());
      }
    }
    DoubleSupplier u = () -> ThreadLocalRandom.current().nextDouble();
    BitSet rejected = new BitSet();
    for (int round = 0; round < ROUNDS; round++) {
      Algorithm2.Choice plan = PlacementPlan.plan(ix, numOfReplicas, blocksize,
          writer == null ? null : writer.getName(), chosenNames, excludedNames, rejected, u);
      if (plan.nodes.length < numOfReplicas) {
        counters.fallback("short");
        return null;
      }
      List<DatanodeStorageInfo> picked = new ArrayList<>(plan.nodes.length);
      boolean retry = false;
      for (int i : plan.nodes) {
        DatanodeDescriptor dn = resolver.find(clusterMap, ix.rackNames[ix.rack[i]], ix.ids[i]);
        DatanodeStorageInfo storage = dn != null && usable(dn) ? dn.chooseStorage4Block(type, blocksize) : null;
        if (storage == null) { // unknown to the NameNode, not in service, stale or full: pick again without it
          rejected.set(i);
          retry = true;
          break;
        }
        picked.add(storage);
      }
      if (retry) {
        continue;
      }
      if (!spansEnoughRacks(chosen, picked)) {
        counters.fallback("rack");
        return null;
      }
      if (excludedNodes != null) {
        for (DatanodeStorageInfo s : picked) {
          excludedNodes.add(s.getDatanodeDescriptor());
        }
      }
      List<DatanodeStorageInfo> result = new ArrayList<>(returnChosenNodes ? chosen : new ArrayList<>());
      result.addAll(picked);
      counters.advised();
      return pipeline(writer, result);
    }
    counters.fallback("rejected_by_namenode");
    return null;
  }

  private boolean usable(DatanodeDescriptor dn) {
    return clusterMap.contains(dn) && dn.isInService() && !(avoidStaleForWrite && dn.isStale(staleIntervalMs));
  }

  /** Hadoop's rack rule (min(2, replicas, racks) racks) holds, so verifyBlockPlacement agrees. */
  private boolean spansEnoughRacks(List<DatanodeStorageInfo> chosen, List<DatanodeStorageInfo> picked) {
    Set<String> racks = new HashSet<>();
    for (DatanodeStorageInfo s : chosen) {
      racks.add(s.getDatanodeDescriptor().getNetworkLocation());
    }
    for (DatanodeStorageInfo s : picked) {
      racks.add(s.getDatanodeDescriptor().getNetworkLocation());
    }
    int need = Math.min(Math.min(2, chosen.size() + picked.size()), clusterMap.getNumOfRacks());
    return racks.size() >= need;
  }

  /** Greedy nearest-next pipeline from the writer (or the first target) by topology distance. */
  private DatanodeStorageInfo[] pipeline(Node writer, List<DatanodeStorageInfo> storages) {
    DatanodeStorageInfo[] out = storages.toArray(DatanodeStorageInfo.EMPTY_ARRAY);
    if (out.length < 2) {
      return out;
    }
    Node from = writer != null && clusterMap.contains(writer) ? writer : out[0].getDatanodeDescriptor();
    for (int k = 0; k < out.length; k++) {
      int best = k;
      int bestDist = clusterMap.getDistance(from, out[k].getDatanodeDescriptor());
      for (int j = k + 1; j < out.length; j++) {
        int d = clusterMap.getDistance(from, out[j].getDatanodeDescriptor());
        if (d < bestDist) {
          best = j;
          bestDist = d;
        }
      }
      DatanodeStorageInfo t = out[k];
      out[k] = out[best];
      out[best] = t;
      from = out[k].getDatanodeDescriptor();
    }
    return out;
  }

  @Override
  public BlockPlacementStatus verifyBlockPlacement(DatanodeInfo[] locs, int numberOfReplicas) {
    BlockPlacementStatus base = super.verifyBlockPlacement(locs, numberOfReplicas);
    if (!verifyGrid || locs == null) {
      return base;
    }
    PlacementIndex ix = table("stale_verify");
    if (ix == null) {
      return base;
    }
    List<String> names = new ArrayList<>(locs.length);
    for (DatanodeInfo d : locs) {
      names.add(d.getName());
    }
    try {
      ReplicaRules.Status grid = ReplicaRules.verify(ix, names, numberOfReplicas);
      return grid.satisfied ? base : new GridPlacementStatus(base, grid.violations);
    } catch (RuntimeException e) { // never fail fsck or the block manager because of the plug-in
      return pluginFailed("verifyBlockPlacement", e, base);
    }
  }

  @Override
  public List<DatanodeStorageInfo> chooseReplicasToDelete(Collection<DatanodeStorageInfo> availableReplicas,
      Collection<DatanodeStorageInfo> delCandidates, int expectedNumOfReplicas, List<StorageType> excessTypes,
      DatanodeDescriptor addedNode, DatanodeDescriptor delNodeHint) {
    List<DatanodeStorageInfo> grid = null;
    try {
      grid = deleteGrid ? gridDeletes(availableReplicas, delCandidates, expectedNumOfReplicas, excessTypes,
          delNodeHint) : null;
    } catch (RuntimeException e) {
      pluginFailed("chooseReplicasToDelete", e, null);
    }
    return grid != null ? grid : super.chooseReplicasToDelete(availableReplicas, delCandidates,
        expectedNumOfReplicas, excessTypes, addedNode, delNodeHint);
  }

  /** One replica at a time by the grid rules, honouring excessTypes as the default does; null = fall back. */
  private List<DatanodeStorageInfo> gridDeletes(Collection<DatanodeStorageInfo> available,
      Collection<DatanodeStorageInfo> candidates, int expected, List<StorageType> excessTypes,
      DatanodeDescriptor hint) {
    PlacementIndex ix = table("stale_delete");
    if (ix == null) {
      return null;
    }
    List<String> keep = new ArrayList<>();
    for (DatanodeStorageInfo s : available) {
      String id = s.getDatanodeDescriptor().getName();
      if (ix.resolveId(id) < 0) {
        counters.fallback("unknown_replica");
        return null;
      }
      keep.add(id);
    }
    List<StorageType> types = new ArrayList<>(excessTypes);
    List<DatanodeStorageInfo> left = new ArrayList<>(candidates);
    List<DatanodeStorageInfo> out = new ArrayList<>();
    String hintName = hint == null ? null : hint.getName();
    while (candidates.size() - expected > out.size()) {
      List<String> allowed = new ArrayList<>();
      for (DatanodeStorageInfo s : left) {
        if (types.contains(s.getStorageType())) {
          allowed.add(s.getDatanodeDescriptor().getName());
        }
      }
      List<String> pick = ReplicaRules.chooseReplicasToDelete(ix, keep, keep.size() - 1, allowed,
          out.isEmpty() ? hintName : null);
      if (pick.isEmpty()) {
        break;
      }
      DatanodeStorageInfo s = null;
      for (DatanodeStorageInfo c : left) {
        if (c.getDatanodeDescriptor().getName().equals(pick.get(0)) && types.contains(c.getStorageType())) {
          s = c;
          break;
        }
      }
      if (s == null) {
        counters.fallback("delete_mismatch");
        return null;
      }
      left.remove(s);
      keep.remove(pick.get(0));
      types.remove(s.getStorageType());
      out.add(s);
    }
    if (out.size() < candidates.size() - expected) {
      counters.fallback("delete_short");
      return null;
    }
    excessTypes.clear();
    excessTypes.addAll(types);
    counters.advised();
    return out;
  }

  @Override
  public boolean isMovable(Collection<DatanodeInfo> candidates, DatanodeInfo source, DatanodeInfo target) {
    if (!super.isMovable(candidates, source, target)) {
      return false;
    }
    PlacementIndex ix = deleteGrid ? table("stale_move") : null;
    if (ix == null) {
      return true;
    }
    List<String> names = new ArrayList<>(candidates.size());
    for (DatanodeInfo d : candidates) {
      names.add(d.getName());
    }
    try {
      return ReplicaRules.isMovable(ix, names, source.getName(), target.getName());
    } catch (RuntimeException e) {
      return pluginFailed("isMovable", e, true);
    }
  }

  /** Count a failure of the plug-in's own logic (logged once per distinct error); the caller answers as the default. */
  private <T> T pluginFailed(String method, RuntimeException e, T answer) {
    counters.fallback("error");
    String why = method + ": " + e;
    if (!why.equals(lastFailure)) { // fsck verifies every block: one line per kind of failure, not per block
      lastFailure = why;
      LOG.warn("Harvester {} failed, answering as the default policy: {}", method, e.toString());
    }
    return answer;
  }
}
