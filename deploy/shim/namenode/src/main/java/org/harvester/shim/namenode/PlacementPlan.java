package org.harvester.shim.namenode;

import java.util.BitSet;
import java.util.Collection;
import java.util.List;
import java.util.function.DoubleSupplier;
import org.harvester.shim.common.Algorithm2;
import org.harvester.shim.common.PlacementIndex;

/**
 * The Hadoop-free half of chooseTarget: names as the NameNode gives them (DataNode transfer
 * addresses {@code ip:port}, a writer's name) mapped to table nodes, then Algorithm 2.
 * Names the table does not know are ignored when excluded and count as unknown when chosen
 * (hdfs_placement.algorithm2.choose_targets does the same).
 */
final class PlacementPlan {
  private PlacementPlan() {
  }

  static Algorithm2.Choice plan(PlacementIndex ix, int numOfReplicas, long blockSize, String writer,
      List<String> chosen, Collection<String> excluded, BitSet extraExcluded, DoubleSupplier u) {
    int[] existing = new int[chosen.size()];
    for (int k = 0; k < existing.length; k++) {
      existing[k] = ix.resolve(chosen.get(k));
    }
    BitSet blocked = (BitSet) extraExcluded.clone();
    for (String name : excluded) {
      int i = ix.resolve(name);
      if (i >= 0) {
        blocked.set(i);
      }
    }
    return Algorithm2.choose(ix, numOfReplicas, blockSize, u, ix.resolve(writer), existing, blocked, new int[0]);
  }
}
