package org.harvester.shim.common;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.TreeSet;
import java.util.function.DoubleSupplier;

/**
 * Algorithm 2 of OSDI'16 §4.2 over a cached {@link PlacementIndex} — the Java twin of
 * hdfs_placement/algorithm2.py ({@code choose_target_indices}); read that module's docstring
 * for the choices the paper leaves open. Same constraints, same relaxation order, same
 * sequence of uniform draws, so given the same random stream both languages return the same
 * nodes (tests: the cross-language vectors).
 *
 * <p>Hard constraints (never relaxed): not excluded, not already holding the block, free
 * bytes &gt;= block size. Soft ones, relaxed only when no node satisfies them, in this order:
 * environment, row/column, busy. Randomness comes only from the caller's
 * {@link DoubleSupplier} of uniform [0, 1) draws.
 */
public final class Algorithm2 {
  public static final String RELAX_ENVIRONMENT = "environment";
  public static final String RELAX_ROW_COL = "row_col";
  public static final String RELAX_BUSY = "busy";
  static final int FAST_ATTEMPTS = 8; // random picks at full constraints before the exhaustive scan
  private static final String[] NONE = {};

  private Algorithm2() {
  }

  /** The targets of one call: node indices, what each relaxed, and a one-line reason. */
  public static final class Choice {
    public final int[] nodes;
    public final String[][] relaxed;
    public final String reason;

    Choice(int[] nodes, String[][] relaxed, String reason) {
      this.nodes = nodes;
      this.relaxed = relaxed;
      this.reason = reason;
    }

    public boolean anyRelaxed() {
      for (String[] r : relaxed) {
        if (r.length > 0) {
          return true;
        }
      }
      return false;
    }
  }

  /** Algorithm 2's per-block bookkeeping: what the replicas placed so far use. */
  private static final class Block {
    final BitSet taken = new BitSet();
    final BitSet envs = new BitSet();
    final BitSet racks = new BitSet();
    int rows; // bit masks of rows / columns used since the last "forget" (lines 15-16)
    int cols;
    int count;
    int nRacks;

    void add(PlacementIndex ix, int node) {
      count++;
      if (node >= 0) {
        taken.set(node);
        envs.set(ix.env[node]);
        if (!racks.get(ix.rack[node])) {
          racks.set(ix.rack[node]);
          nRacks++;
        }
        if (ix.row[node] >= 0) {
          rows |= 1 << ix.row[node];
          cols |= 1 << ix.col[node];
        }
      }
      if (count % 3 == 0) { // Algorithm 2 lines 15-16: forget rows and columns every 3 replicas
        rows = 0;
        cols = 0;
      }
    }
  }

  /**
   * {@code nNew} more replicas of one block. {@code existing} may hold -1 for replicas on
   * nodes the table does not know (they count in the groups of 3 but constrain nothing);
   * {@code excluded} and {@code favored} hold node indices (unknown ones already dropped).
   * Fewer targets than asked means no hard-eligible node was left, never a bad target.
   */
  public static Choice choose(PlacementIndex ix, int nNew, long blockSize, DoubleSupplier u, int writer,
      int[] existing, BitSet excluded, int[] favored) {
    Block blk = new Block();
    for (int e : existing) {
      blk.add(ix, e);
    }
    int[] out = new int[Math.max(nNew, 0)];
    String[][] relaxedOut = new String[out.length][];
    List<String> notes = new ArrayList<>(2);
    int k = 0;
    for (int r = 0; r < nNew; r++) {
      int node = -1;
      String[] relaxed = NONE;
      for (int f : favored) {
        if (f >= 0 && ideal(ix, blk, excluded, blockSize, f)) {
          node = f;
          break;
        }
      }
      if (node < 0 && blk.count == 0 && writer >= 0) {
        if (usable(ix, blk, excluded, blockSize, writer)) {
          node = writer;
        } else {
          notes.add("writer not usable (excluded, full or busy): first replica random");
        }
      }
      if (node < 0) {
        node = sample(ix, blk, excluded, blockSize, u);
      }
      if (node < 0) {
        long packed = scan(ix, blk, excluded, blockSize, u);
        node = (int) (packed >> 8);
        relaxed = node >= 0 ? relaxedNames((int) (packed & 0xff)) : NONE;
      }
      if (node < 0) {
        notes.add("no datanode left with " + blockSize + " free bytes outside excluded/chosen");
        break;
      }
      out[k] = node;
      relaxedOut[k] = relaxed;
      k++;
      blk.add(ix, node);
    }
    int[] nodes = java.util.Arrays.copyOf(out, k);
    String[][] relaxed = java.util.Arrays.copyOf(relaxedOut, k);
    StringBuilder reason = new StringBuilder().append(k).append(" of ").append(nNew).append(" targets");
    for (String note : notes) {
      reason.append("; ").append(note);
    }
    TreeSet<String> kinds = new TreeSet<>();
    for (String[] rr : relaxed) {
      java.util.Collections.addAll(kinds, rr);
    }
    if (!kinds.isEmpty()) {
      reason.append("; relaxed: ").append(String.join(", ", kinds));
    }
    return new Choice(nodes, relaxed, reason.toString());
  }

  private static boolean usable(PlacementIndex ix, Block blk, BitSet excluded, long blockSize, int i) {
    return !excluded.get(i) && !blk.taken.get(i) && ix.remaining[i] >= blockSize && !ix.busy[i];
  }

  private static boolean ideal(PlacementIndex ix, Block blk, BitSet excluded, long blockSize, int i) {
    if (!usable(ix, blk, excluded, blockSize, i) || blk.envs.get(ix.env[i])) {
      return false;
    }
    int r = ix.row[i];
    return r >= 0 && ((blk.rows >> r) & 1) == 0 && ((blk.cols >> ix.col[i]) & 1) == 0;
  }

  /** Lines 9-14 by rejection sampling; -1 when the attempts find nothing. */
  private static int sample(PlacementIndex ix, Block blk, BitSet excluded, long blockSize, DoubleSupplier u) {
    int[] cells = ix.allowedCells[(blk.rows << PlacementIndex.COLS) | blk.cols];
    if (cells.length == 0) {
      return -1;
    }
    boolean wantNewRack = blk.nRacks < ix.nRacks;
    int backup = -1;
    for (int a = 0; a < FAST_ATTEMPTS; a++) {
      int c = cells[(int) (u.getAsDouble() * cells.length)];
      double[] cum = ix.cellCum[c];
      int[] nodes = ix.cellNodes[c];
      int k = bisectRight(cum, cum.length, u.getAsDouble() * cum[cum.length - 1]);
      int i = nodes[k < nodes.length ? k : nodes.length - 1];
      if (excluded.get(i) || blk.taken.get(i) || ix.remaining[i] < blockSize || ix.busy[i]) {
        continue;
      }
      if (blk.envs.get(ix.env[i])) {
        continue;
      }
      if (!wantNewRack || !blk.racks.get(ix.rack[i])) {
        return i;
      }
      if (backup < 0) {
        backup = i;
      }
    }
    return backup;
  }

  /**
   * Exhaustive fallback: among hard-eligible nodes, the best by (not busy &gt; new row + new
   * column &gt; new environment &gt; new rack), drawn in proportion to free bytes. Returns
   * (node &lt;&lt; 8 | relaxed bits), node -1 when none is eligible.
   */
  private static long scan(PlacementIndex ix, Block blk, BitSet excluded, long blockSize, DoubleSupplier u) {
    int best = -1;
    int[] cand = new int[ix.n];
    int m = 0;
    for (int i = 0; i < ix.n; i++) {
      if (ix.remaining[i] < blockSize || excluded.get(i) || blk.taken.get(i)) {
        continue;
      }
      int r = ix.row[i];
      int c = ix.col[i];
      int rn = r >= 0 && ((blk.rows >> r) & 1) == 0 ? 1 : 0;
      int cn = c >= 0 && ((blk.cols >> c) & 1) == 0 ? 1 : 0;
      int score = (ix.busy[i] ? 0 : 64) + (rn + cn) * 16 + (blk.envs.get(ix.env[i]) ? 0 : 4)
          + (blk.racks.get(ix.rack[i]) ? 0 : 1);
      if (score > best) {
        best = score;
        m = 0;
      }
      if (score == best) {
        cand[m++] = i;
      }
    }
    if (m == 0) {
      return -1L << 8;
    }
    double[] cum = new double[m];
    double sum = 0.0;
    for (int k = 0; k < m; k++) {
      sum += (double) ix.remaining[cand[k]];
      cum[k] = sum;
    }
    int k = sum > 0 ? bisectRight(cum, m, u.getAsDouble() * sum) : (int) (u.getAsDouble() * m);
    int i = cand[Math.min(k, m - 1)];
    int bits = 0;
    if (blk.envs.get(ix.env[i])) {
      bits |= 1;
    }
    int r = ix.row[i];
    if (r < 0 || ((blk.rows >> r) & 1) != 0 || ((blk.cols >> ix.col[i]) & 1) != 0) {
      bits |= 2;
    }
    if (ix.busy[i]) {
      bits |= 4;
    }
    return ((long) i << 8) | bits;
  }

  private static String[] relaxedNames(int bits) {
    List<String> out = new ArrayList<>(3);
    if ((bits & 1) != 0) {
      out.add(RELAX_ENVIRONMENT);
    }
    if ((bits & 2) != 0) {
      out.add(RELAX_ROW_COL);
    }
    if ((bits & 4) != 0) {
      out.add(RELAX_BUSY);
    }
    return out.toArray(NONE);
  }

  /** Python's {@code bisect.bisect_right} on a[0..len): the number of elements &lt;= x. */
  static int bisectRight(double[] a, int len, double x) {
    int lo = 0;
    int hi = len;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (x < a[mid]) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  }
}
