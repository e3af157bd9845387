package org.harvester.shim.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.BitSet;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Invariants of the Java Algorithm 2 that must hold for every table and request. */
class Algorithm2Test {
  private static final long BLOCK = 128L * 1024 * 1024;

  @Test
  void threeReplicasOnTheGridUseThreeRowsColumnsAndEnvironments() {
    PlacementIndex ix = PlacementIndex.parse(Tables.grid9(3, 3));
    for (long seed = 0; seed < 200; seed++) {
      Algorithm2.Choice c = Algorithm2.choose(ix, 3, BLOCK, new SplitMix64(seed), -1, new int[0], new BitSet(),
          new int[0]);
      assertEquals(3, c.nodes.length);
      assertFalse(c.anyRelaxed(), c.reason);
      Set<Integer> rows = new HashSet<>();
      Set<Integer> cols = new HashSet<>();
      Set<Integer> envs = new HashSet<>();
      Set<Integer> racks = new HashSet<>();
      for (int i : c.nodes) {
        rows.add(ix.row[i]);
        cols.add(ix.col[i]);
        envs.add(ix.env[i]);
        racks.add(ix.rack[i]);
      }
      assertEquals(3, rows.size());
      assertEquals(3, cols.size());
      assertEquals(3, envs.size());
      assertTrue(racks.size() >= 2, "racks are a tie-breaker: a new rack is found among 3 per cell");
    }
  }

  @Test
  void usableWriterGetsTheFirstReplica() {
    PlacementIndex ix = PlacementIndex.parse(Tables.grid9(3, 3));
    int writer = ix.resolve("h111");
    Algorithm2.Choice c = Algorithm2.choose(ix, 3, BLOCK, new SplitMix64(7), writer, new int[0], new BitSet(),
        new int[0]);
    assertEquals(writer, c.nodes[0]);
    assertEquals(ix.resolve("10.0.4.1"), writer, "a bare IP resolves to the same DataNode");
  }

  @Test
  void hardConstraintsHoldOnRandomClusters() {
    Random rnd = new Random(42);
    for (int t = 0; t < 40; t++) {
      PlacementIndex ix = PlacementIndex.parse(Tables.random(rnd, 1 + rnd.nextInt(300)));
      for (int q = 0; q < 25; q++) {
        BitSet excluded = new BitSet();
        for (int k = rnd.nextInt(ix.n / 3 + 1); k > 0; k--) {
          excluded.set(rnd.nextInt(ix.n));
        }
        int[] existing = rnd.nextBoolean() ? new int[] {rnd.nextInt(ix.n)} : new int[] {-1, rnd.nextInt(ix.n)};
        long block = rnd.nextBoolean() ? BLOCK : 500_000_000_000L;
        int want = 1 + rnd.nextInt(5);
        Algorithm2.Choice c = Algorithm2.choose(ix, want, block, new SplitMix64(rnd.nextLong()),
            rnd.nextInt(ix.n + 1) - 1, existing, excluded, new int[] {rnd.nextInt(ix.n)});
        Set<Integer> seen = new HashSet<>();
        for (int e : existing) {
          seen.add(e);
        }
        int eligible = 0;
        for (int i = 0; i < ix.n; i++) {
          if (!excluded.get(i) && !seen.contains(i) && ix.remaining[i] >= block) {
            eligible++;
          }
        }
        assertEquals(Math.min(want, eligible), c.nodes.length, "fewer targets only when nothing is left: " + c.reason);
        for (int i : c.nodes) {
          assertFalse(excluded.get(i), "excluded node chosen");
          assertTrue(ix.remaining[i] >= block, "node without room chosen");
          assertTrue(seen.add(i), "node chosen twice or already holding the block");
        }
      }
    }
  }

  @Test
  void busyNodesAreUsedOnlyWhenNothingElseFits() {
    String[] nodes = new String[4];
    for (int k = 0; k < 4; k++) {
      nodes[k] = Tables.node("10.0.0." + k + ":9866", "h" + k, "/r" + k, "t" + k, "e" + k, k % 3, (k + 1) % 3,
          1_000_000_000_000L, k < 2);
    }
    PlacementIndex ix = PlacementIndex.parse(Tables.table(1, nodes));
    Algorithm2.Choice two = Algorithm2.choose(ix, 2, BLOCK, new SplitMix64(1), -1, new int[0], new BitSet(),
        new int[0]);
    for (int i : two.nodes) {
      assertFalse(ix.busy[i], "a free node was available");
    }
    Algorithm2.Choice four = Algorithm2.choose(ix, 4, BLOCK, new SplitMix64(1), -1, new int[0], new BitSet(),
        new int[0]);
    assertEquals(4, four.nodes.length);
    assertTrue(four.reason.contains("relaxed"), four.reason);
  }

  @Test
  void bisectRightMatchesPython() {
    double[] a = {1.0, 2.0, 2.0, 5.0};
    assertEquals(0, Algorithm2.bisectRight(a, 4, 0.5));
    assertEquals(3, Algorithm2.bisectRight(a, 4, 2.0));
    assertEquals(4, Algorithm2.bisectRight(a, 4, 5.0));
  }
}
