package org.harvester.shim.namenode;

import java.util.List;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementStatus;

/** Hadoop's own (rack) verdict combined with the grid's: satisfied only when both are. */
final class GridPlacementStatus implements BlockPlacementStatus {
  private final BlockPlacementStatus base;
  private final List<String> violations;

  GridPlacementStatus(BlockPlacementStatus base, List<String> violations) {
    this.base = base;
    this.violations = violations;
  }

  @Override
  public boolean isPlacementPolicySatisfied() {
    return false;
  }

  @Override
  public String getErrorDescription() {
    String grid = "Harvester grid placement (OSDI'16 §4.2) is violated: " + String.join("; ", violations);
    return base.isPlacementPolicySatisfied() ? grid : base.getErrorDescription() + " " + grid;
  }

  @Override
  public int getAdditionalReplicasRequired() {
    return Math.max(1, base.getAdditionalReplicasRequired());
  }
}
