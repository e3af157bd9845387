package org.harvester.shim.namenode;

import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.apache.hadoop.net.NetworkTopology;
import org.apache.hadoop.net.Node;
import org.apache.hadoop.net.NodeBase;

/**
 * Table DataNode id ({@code ip:port}) to the NameNode's live DatanodeDescriptor. First the
 * topology path {@code <rack>/<ip:port>} (a DataNode's name in NetworkTopology is its transfer
 * address); when the table's rack differs from the NameNode's, a name map built from the
 * topology's leaves, rebuilt at most once a second on a miss.
 */
final class DatanodeResolver {
  private static final long REBUILD_NANOS = 1_000_000_000L;
  private volatile Map<String, DatanodeDescriptor> byName = new HashMap<>();
  private volatile long builtAt = Long.MIN_VALUE / 2;

  DatanodeDescriptor find(NetworkTopology clusterMap, String rack, String id) {
    Node n = clusterMap.getNode(NodeBase.normalize(rack) + NodeBase.PATH_SEPARATOR_STR + id);
    if (n instanceof DatanodeDescriptor) {
      return (DatanodeDescriptor) n;
    }
    DatanodeDescriptor d = byName.get(id);
    if (d == null && System.nanoTime() - builtAt > REBUILD_NANOS) {
      Map<String, DatanodeDescriptor> m = new HashMap<>();
      for (Node leaf : clusterMap.getLeaves(NodeBase.ROOT)) {
        if (leaf instanceof DatanodeDescriptor) {
          m.put(leaf.getName(), (DatanodeDescriptor) leaf);
        }
      }
      byName = m;
      builtAt = System.nanoTime();
      d = m.get(id);
    }
    return d;
  }
}
