package org.harvester.shim.namenode;

import java.net.URI;
import org.harvester.shim.common.AdviceClient;
import org.harvester.shim.common.AdviceSettings;
import org.harvester.shim.common.NodeOrderingAdvice;
import org.harvester.shim.common.PlacementIndex;

/**
 * Fetches one advice document with the plug-ins' own client, twice (200, then 304 on the
 * ETag), and prints what it holds: tests/shim/test_shim_protocol.py runs it against the
 * sidecar's real Python routes. Usage: AdviceProbe table|ordering URL
 */
public final class AdviceProbe {
  private AdviceProbe() {
  }

  public static void main(String[] args) {
    AdviceSettings s = new AdviceSettings(true, URI.create(args[1]), 10_000, 0, 2_000, 5_000, 100, 1_000);
    if (args[0].equals("table")) {
      AdviceClient<PlacementIndex> c = new AdviceClient<>("probe", s, PlacementIndex::parse, ix -> ix.version,
          System::nanoTime);
      boolean first = c.fetchOnce();
      boolean second = c.fetchOnce();
      PlacementIndex ix = c.fresh();
      System.out.println("ok=" + first + "," + second + " version=" + ix.version + " datanodes=" + ix.n
          + " notModified=" + c.notModified());
    } else {
      AdviceClient<NodeOrderingAdvice> c = new AdviceClient<>("probe", s, NodeOrderingAdvice::parse, a -> a.version,
          System::nanoTime);
      boolean first = c.fetchOnce();
      boolean second = c.fetchOnce();
      NodeOrderingAdvice a = c.fresh();
      System.out.println("ok=" + first + "," + second + " version=" + a.version + " long=" + a.ordering("long")
          + " notModified=" + c.notModified());
    }
  }
}
