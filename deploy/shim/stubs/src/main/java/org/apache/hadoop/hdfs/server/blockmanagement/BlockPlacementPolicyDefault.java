// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.hdfs.server.blockmanagement;

import java.util.Collection;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.AddBlockFlag;
import org.apache.hadoop.hdfs.protocol.BlockStoragePolicy;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.net.NetworkTopology;
import org.apache.hadoop.net.Node;

public class BlockPlacementPolicyDefault extends BlockPlacementPolicy {
  protected boolean considerLoad;
  protected double considerLoadFactor;
  protected NetworkTopology clusterMap;
  protected Host2NodesMap host2datanodeMap;
  protected long heartbeatInterval;
  protected int tolerateHeartbeatMultiplier;

  protected BlockPlacementPolicyDefault() {
  }

  @Override
  public void initialize(Configuration conf, FSClusterStats stats, NetworkTopology clusterMap,
      Host2NodesMap host2datanodeMap) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  @Override
  public DatanodeStorageInfo[] chooseTarget(String srcPath, int numOfReplicas, Node writer,
      List<DatanodeStorageInfo> chosen, boolean returnChosenNodes, Set<Node> excludedNodes, long blocksize,
      BlockStoragePolicy storagePolicy, EnumSet<AddBlockFlag> flags) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public DatanodeStorageInfo[] chooseTarget(String srcPath, int numOfReplicas, Node writer,
      List<DatanodeStorageInfo> chosen, boolean returnChosenNodes, Set<Node> excludedNodes, long blocksize,
      BlockStoragePolicy storagePolicy, EnumSet<AddBlockFlag> flags, EnumMap<StorageType, Integer> storageTypes) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  @Override
  public BlockPlacementStatus verifyBlockPlacement(DatanodeInfo[] locs, int numOfReplicas) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  @Override
  public List<DatanodeStorageInfo> chooseReplicasToDelete(Collection<DatanodeStorageInfo> availableReplicas,
      Collection<DatanodeStorageInfo> delCandidates, int expectedNumOfReplicas, List<StorageType> excessTypes,
      DatanodeDescriptor addedNode, DatanodeDescriptor delNodeHint) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  @Override
  public boolean isMovable(Collection<DatanodeInfo> candidates, DatanodeInfo source, DatanodeInfo target) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  @Override
  public void setExcludeSlowNodesEnabled(boolean enable) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  @Override
  public boolean getExcludeSlowNodesEnabled() {
    throw new UnsupportedOperationException("compile-only stub");
  }
}
