package org.harvester.shim.common;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One placement table (schema {@code harvester.hdfs-placement.v1}, hdfs_placement/table.py)
 * with everything Algorithm 2 needs precomputed once per version — the Java twin of
 * hdfs_placement/index.py, field for field, so both languages pick the same nodes:
 * integer codes for environments and racks; per grid cell the DataNodes with free space (in
 * table order) and their cumulative free bytes as doubles (one binary search draws a node in
 * proportion to its free space); for each of the 64 (used rows, used columns) masks the
 * non-empty cells Algorithm 2 lines 9-11 still allow. Node {@code i} is the table's i-th
 * DataNode. Immutable: the refresher thread swaps whole instances.
 */
public final class PlacementIndex {
  public static final String SCHEMA = "harvester.hdfs-placement.v1";
  public static final int ROWS = 3;
  public static final int COLS = 3;
  public static final int CELLS = ROWS * COLS;

  public final long version;
  public final long gridVersion;
  public final long generatedAtMs;
  public final double busyCpuThreshold;
  public final int n;
  public final String[] ids;
  public final String[] hostnames;
  public final String[] rackNames;
  public final String[] envNames;
  public final String[] tenants;
  public final int[] row;
  public final int[] col;
  public final int[] env;
  public final int[] rack;
  public final long[] remaining;
  public final boolean[] busy;
  public final int nRacks;
  public final int nEnvs;
  final int[][] cellNodes;
  final double[][] cellCum;
  final int[][] allowedCells;
  private final Map<String, Integer> lookup;

  private PlacementIndex(long version, long gridVersion, long generatedAtMs, double busyCpuThreshold,
      List<Entry> entries) {
    this.version = version;
    this.gridVersion = gridVersion;
    this.generatedAtMs = generatedAtMs;
    this.busyCpuThreshold = busyCpuThreshold;
    n = entries.size();
    ids = new String[n];
    hostnames = new String[n];
    tenants = new String[n];
    row = new int[n];
    col = new int[n];
    env = new int[n];
    rack = new int[n];
    remaining = new long[n];
    busy = new boolean[n];
    Map<String, Integer> envCodes = new LinkedHashMap<>();
    Map<String, Integer> rackCodes = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      Entry e = entries.get(i);
      ids[i] = e.id;
      hostnames[i] = e.hostname;
      tenants[i] = e.tenant;
      row[i] = e.row;
      col[i] = e.col;
      env[i] = envCodes.computeIfAbsent(e.environment, k -> envCodes.size());
      rack[i] = rackCodes.computeIfAbsent(e.rack, k -> rackCodes.size());
      remaining[i] = e.remaining;
      busy[i] = e.busy;
    }
    envNames = envCodes.keySet().toArray(new String[0]);
    rackNames = rackCodes.keySet().toArray(new String[0]);
    nEnvs = envNames.length;
    nRacks = rackNames.length;
    // Writers arrive as a DataNode id, a hostname or a bare IP: all resolve to a node (first
    // match for hostname/IP, exact ids always win), exactly as index.py builds its lookup.
    Map<String, Integer> lk = new HashMap<>();
    for (int i = 0; i < n; i++) {
      lk.putIfAbsent(hostnames[i], i);
      int colon = ids[i].lastIndexOf(':');
      lk.putIfAbsent(colon >= 0 ? ids[i].substring(0, colon) : ids[i], i);
    }
    for (int i = 0; i < n; i++) {
      lk.put(ids[i], i);
    }
    lookup = Collections.unmodifiableMap(lk);
    cellNodes = new int[CELLS][];
    cellCum = new double[CELLS][];
    for (int c = 0; c < CELLS; c++) {
      List<Integer> members = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        if (row[i] >= 0 && row[i] * COLS + col[i] == c && remaining[i] > 0) {
          members.add(i);
        }
      }
      cellNodes[c] = new int[members.size()];
      cellCum[c] = new double[members.size()];
      double sum = 0.0;
      for (int k = 0; k < members.size(); k++) {
        int i = members.get(k);
        cellNodes[c][k] = i;
        sum += (double) remaining[i];
        cellCum[c][k] = sum;
      }
    }
    allowedCells = new int[1 << (ROWS + COLS)][];
    for (int rm = 0; rm < (1 << ROWS); rm++) {
      for (int cm = 0; cm < (1 << COLS); cm++) {
        List<Integer> ok = new ArrayList<>();
        for (int c = 0; c < CELLS; c++) {
          if (cellNodes[c].length > 0 && ((rm >> (c / COLS)) & 1) == 0 && ((cm >> (c % COLS)) & 1) == 0) {
            ok.add(c);
          }
        }
        allowedCells[(rm << COLS) | cm] = ok.stream().mapToInt(Integer::intValue).toArray();
      }
    }
  }

  /** Node index of a DataNode id ({@code ip:port}), hostname or IP; -1 when unknown or empty. */
  public int resolve(String name) {
    if (name == null || name.isEmpty()) {
      return -1;
    }
    Integer i = lookup.get(name);
    return i == null ? -1 : i;
  }

  /** Node index of exactly this DataNode id (not a hostname or IP); -1 otherwise. */
  public int resolveId(String id) {
    int i = resolve(id);
    return i >= 0 && ids[i].equals(id) ? i : -1;
  }

  /** Parse and validate {@code PlacementTable.dumps()}; AdviceFormatException names the bad field. */
  public static PlacementIndex parse(String text) {
    JsonNode doc = Json.parse(text);
    String schema = Json.text(doc, "schema", "table");
    if (!SCHEMA.equals(schema)) {
      throw new AdviceFormatException("table.schema: expected " + SCHEMA + ", got " + schema);
    }
    long version = Json.integer(doc, "version", "table");
    long gridVersion = doc.has("grid_version") ? Json.integer(doc, "grid_version", "table") : 0L;
    if (version < 0 || gridVersion < 0) {
      throw new AdviceFormatException("table.version/grid_version: must be >= 0");
    }
    double threshold = Json.number(doc, "busy_cpu_threshold", "table");
    if (!(threshold >= 0.0 && threshold <= 1.0)) {
      throw new AdviceFormatException("table.busy_cpu_threshold: must be within 0..1");
    }
    if (Json.array(doc, "cells", "table").size() != CELLS) {
      throw new AdviceFormatException("table.cells: a table has " + CELLS + " cells");
    }
    JsonNode nodes = Json.array(doc, "datanodes", "table");
    List<Entry> entries = new ArrayList<>(nodes.size());
    Map<String, Boolean> seen = new HashMap<>();
    for (int i = 0; i < nodes.size(); i++) {
      String where = "table.datanodes[" + i + "]";
      JsonNode d = nodes.get(i);
      if (d == null || !d.isObject()) {
        throw new AdviceFormatException(where + ": expected an object");
      }
      Entry e = new Entry(Json.text(d, "datanode_id", where), Json.text(d, "hostname", where),
          Json.text(d, "rack", where), Json.text(d, "tenant", where), Json.text(d, "environment", where),
          (int) Json.integer(d, "row", where), (int) Json.integer(d, "col", where),
          Json.integer(d, "remaining_bytes", where), Json.bool(d, "busy", where));
      Json.integer(d, "capacity_bytes", where);
      boolean classified = e.row >= 0 && e.row < ROWS && e.col >= 0 && e.col < COLS;
      if (!classified && !(e.row == -1 && e.col == -1)) {
        throw new AdviceFormatException(where + ": cell (" + e.row + ", " + e.col + ") outside the grid");
      }
      if (e.remaining < 0 || e.id.isEmpty()) {
        throw new AdviceFormatException(where + ": empty datanode_id or negative remaining_bytes");
      }
      if (seen.put(e.id, Boolean.TRUE) != null) {
        throw new AdviceFormatException(where + ": duplicate datanode_id " + e.id);
      }
      entries.add(e);
    }
    return new PlacementIndex(version, gridVersion, Json.integer(doc, "generated_at_ms", "table"), threshold,
        entries);
  }

  private static final class Entry {
    final String id;
    final String hostname;
    final String rack;
    final String tenant;
    final String environment;
    final int row;
    final int col;
    final long remaining;
    final boolean busy;

    Entry(String id, String hostname, String rack, String tenant, String environment, int row, int col,
        long remaining, boolean busy) {
      this.id = id;
      this.hostname = hostname;
      this.rack = rack;
      this.tenant = tenant;
      this.environment = environment;
      this.row = row;
      this.col = col;
      this.remaining = remaining;
      this.busy = busy;
    }
  }
}
