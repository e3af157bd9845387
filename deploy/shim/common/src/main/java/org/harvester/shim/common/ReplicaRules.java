package org.harvester.shim.common;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * What a placement policy answers besides chooseTarget, so that Algorithm 2's grid diversity
 * (OSDI'16 §4.2) survives deletions, checks and balancing — the Java twin of
 * hdfs_placement/replica_rules.py (same rules; its docstring explains them). Replicas are named
 * by DataNode id ({@code ip:port}); replicas on nodes missing from the table are never judged
 * nor chosen (a stale table must not make the NameNode move healthy blocks).
 */
public final class ReplicaRules {
  private ReplicaRules() {
  }

  /** Grid/environment/rack diversity of a replica set (verifyBlockPlacement). */
  public static final class Status {
    public final boolean satisfied;
    public final List<String> violations;
    public final List<String> unknown;

    Status(List<String> violations, List<String> unknown) {
      this.satisfied = violations.isEmpty();
      this.violations = violations;
      this.unknown = unknown;
    }

    /** Each violation's kind (row, col, environment, rack), in order. */
    public List<String> kinds() {
      List<String> out = new ArrayList<>();
      for (String v : violations) {
        out.add(v.substring(0, v.indexOf(':')));
      }
      return out;
    }
  }

  private static final class Known {
    final List<Integer> nodes = new ArrayList<>();
    final List<String> unknown = new ArrayList<>();
  }

  private static Known known(PlacementIndex ix, Collection<String> replicas) {
    Known k = new Known();
    for (String r : new LinkedHashSet<>(replicas)) { // a replica listed twice is one replica
      int i = ix.resolveId(r);
      if (i >= 0) {
        k.nodes.add(i);
      } else {
        k.unknown.add(r);
      }
    }
    return k;
  }

  private static int[] bandsInUse(PlacementIndex ix) {
    Set<Integer> rows = new HashSet<>();
    Set<Integer> cols = new HashSet<>();
    for (int c = 0; c < PlacementIndex.CELLS; c++) {
      if (ix.cellNodes[c].length > 0) {
        rows.add(c / PlacementIndex.COLS);
        cols.add(c % PlacementIndex.COLS);
      }
    }
    return new int[] {Math.max(rows.size(), 1), Math.max(cols.size(), 1)};
  }

  /** verify_placement: {@code replication} (HDFS numOfReplicas, &lt; 0 = the set's size) sets the rack rule. */
  public static Status verify(PlacementIndex ix, Collection<String> replicas, int replication) {
    Known kn = known(ix, replicas);
    int k = kn.nodes.size();
    List<String> violations = new ArrayList<>();
    int[] bands = bandsInUse(ix);
    String[] names = {"row", "col"};
    int[][] attrs = {ix.row, ix.col};
    for (int a = 0; a < 2; a++) {
      TreeMap<Integer, Integer> counts = new TreeMap<>();
      for (int i : kn.nodes) {
        counts.merge(attrs[a][i], 1, Integer::sum);
      }
      int cap = k == 0 ? 0 : -Math.floorDiv(-k, Math.min(3, bands[a]));
      for (java.util.Map.Entry<Integer, Integer> e : counts.entrySet()) {
        int band = e.getKey();
        int c = e.getValue();
        if (band < 0) {
          violations.add(names[a] + ": " + c + " replica(s) on tenants outside the grid");
        } else if (c > cap) {
          violations.add(names[a] + ": " + c + " replicas in " + names[a] + " " + band + " (at most " + cap
              + " for " + k + ")");
        }
      }
    }
    TreeMap<Integer, Integer> envs = new TreeMap<>();
    for (int i : kn.nodes) {
      envs.merge(ix.env[i], 1, Integer::sum);
    }
    if (envs.size() < Math.min(k, ix.nEnvs)) {
      List<String> dup = new ArrayList<>();
      for (java.util.Map.Entry<Integer, Integer> e : envs.entrySet()) {
        if (e.getValue() > 1) {
          dup.add(ix.envNames[e.getKey()]);
        }
      }
      java.util.Collections.sort(dup);
      violations.add("environment: " + (k - envs.size()) + " replica(s) share environment(s) " + String.join(", ", dup));
    }
    Set<Integer> racks = new HashSet<>();
    for (int i : kn.nodes) {
      racks.add(ix.rack[i]);
    }
    int need = Math.min(Math.min(2, replication < 0 ? k : replication), ix.nRacks);
    if (racks.size() < need) {
      violations.add("rack: " + racks.size() + " rack(s) < " + need);
    }
    return new Status(violations, kn.unknown);
  }

  /** (distinct rows, distinct columns, distinct environments, min(distinct racks, 2)). */
  private static int[] diversity(PlacementIndex ix, List<Integer> nodes) {
    Set<Integer> rows = new HashSet<>();
    Set<Integer> cols = new HashSet<>();
    Set<Integer> envs = new HashSet<>();
    Set<Integer> racks = new HashSet<>();
    for (int i : nodes) {
      if (ix.row[i] >= 0) {
        rows.add(ix.row[i]);
      }
      if (ix.col[i] >= 0) {
        cols.add(ix.col[i]);
      }
      envs.add(ix.env[i]);
      racks.add(ix.rack[i]);
    }
    return new int[] {rows.size(), cols.size(), envs.size(), Math.min(racks.size(), 2)};
  }

  private static List<Integer> without(List<Integer> keep, int drop) {
    List<Integer> out = new ArrayList<>(keep.size());
    for (int j : keep) {
      if (j >= 0 && j != drop) {
        out.add(j);
      }
    }
    return out;
  }

  /**
   * choose_replicas_to_delete: remove one replica at a time until {@code replication} remain,
   * the one whose removal loses least (rows+columns, then environments, then the second rack;
   * among equals a busy node, then least free space, then id). {@code candidates} (null = all)
   * limits what may go; {@code hint} is taken when it loses no more than the best choice.
   */
  public static List<String> chooseReplicasToDelete(PlacementIndex ix, Collection<String> replicas, int replication,
      Collection<String> candidates, String hint) {
    Known kn = known(ix, replicas);
    Set<Integer> allowed = new HashSet<>();
    if (candidates == null) {
      allowed.addAll(kn.nodes);
    } else {
      for (String c : candidates) {
        int i = ix.resolve(c);
        if (i >= 0) {
          allowed.add(i);
        }
      }
    }
    List<Integer> keep = new ArrayList<>(kn.nodes);
    for (int u = 0; u < kn.unknown.size(); u++) {
      keep.add(-1); // unknown replicas still count towards the total
    }
    int hintI = hint == null || hint.isEmpty() ? -1 : ix.resolve(hint);
    List<String> deleted = new ArrayList<>();
    while (keep.size() > replication) {
      List<Integer> options = new ArrayList<>();
      for (int i : keep) {
        if (i >= 0 && allowed.contains(i)) {
          options.add(i);
        }
      }
      if (options.isEmpty()) {
        break;
      }
      int[] before = diversity(ix, without(keep, -1));
      int pick = -1;
      long[] pickKey = null;
      for (int i : options) {
        long[] key = key(ix, keep, before, i);
        if (pickKey == null || compare(ix, key, i, pickKey, pick) < 0) {
          pick = i;
          pickKey = key;
        }
      }
      if (hintI >= 0 && options.contains(hintI)) {
        long[] hk = key(ix, keep, before, hintI);
        if (hk[0] == pickKey[0] && hk[1] == pickKey[1] && hk[2] == pickKey[2]) {
          pick = hintI;
        }
      }
      keep.remove(Integer.valueOf(pick));
      deleted.add(ix.ids[pick]);
    }
    return deleted;
  }

  /** (row/col lost, environments lost, second rack lost, not busy, free bytes); ties by id. */
  private static long[] key(PlacementIndex ix, List<Integer> keep, int[] before, int i) {
    int[] after = diversity(ix, without(keep, i));
    return new long[] {
        (before[0] - after[0]) + (before[1] - after[1]), before[2] - after[2],
        after[3] < Math.min(2, before[3]) ? 1 : 0, ix.busy[i] ? 0 : 1, ix.remaining[i]};
  }

  private static int compare(PlacementIndex ix, long[] a, int ai, long[] b, int bi) {
    for (int k = 0; k < a.length; k++) {
      int c = Long.compare(a[k], b[k]);
      if (c != 0) {
        return c;
      }
    }
    return ix.ids[ai].compareTo(ix.ids[bi]);
  }

  /** is_movable: may the replica on {@code source} move to {@code target} without losing diversity? */
  public static boolean isMovable(PlacementIndex ix, Collection<String> replicas, String source, String target) {
    Known kn = known(ix, replicas);
    int s = ix.resolve(source);
    int t = ix.resolve(target);
    if (!kn.nodes.contains(s) || t < 0 || kn.nodes.contains(t)) {
      return false;
    }
    List<Integer> after = new ArrayList<>();
    for (int i : kn.nodes) {
      after.add(i == s ? t : i);
    }
    int[] a = diversity(ix, after);
    int[] b = diversity(ix, kn.nodes);
    for (int k = 0; k < a.length; k++) {
      if (a[k] < b[k]) {
        return false;
      }
    }
    return true;
  }
}
