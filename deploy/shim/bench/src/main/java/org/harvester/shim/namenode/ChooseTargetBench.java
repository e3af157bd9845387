package org.harvester.shim.namenode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;
import org.harvester.shim.common.Algorithm2;
import org.harvester.shim.common.PlacementIndex;

/**
 * In-process chooseTarget over a cached table (bench/shim.py drives it): the work the plug-in
 * does inside an addBlock RPC before touching NameNode objects — the writer's and excluded
 * nodes' names mapped to table nodes, then Algorithm 2 for 3 replicas with ThreadLocalRandom.
 * Warm-up first (JIT), then every call timed on its own; prints and writes percentiles.
 * Usage: ChooseTargetBench TABLE.json RESULT.json [calls] [warmup]
 */
public final class ChooseTargetBench {
  private ChooseTargetBench() {
  }

  public static void main(String[] args) throws IOException {
    PlacementIndex ix = PlacementIndex.parse(new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8));
    int calls = args.length > 2 ? Integer.parseInt(args[2]) : 200_000;
    int warmup = args.length > 3 ? Integer.parseInt(args[3]) : 200_000;
    Random rnd = new Random(1);
    int variants = 4096;
    String[] writers = new String[variants];
    List<List<String>> excluded = new ArrayList<>();
    for (int k = 0; k < variants; k++) {
      writers[k] = rnd.nextBoolean() ? ix.ids[rnd.nextInt(ix.n)] : null; // half the writers run on a DataNode
      excluded.add(rnd.nextInt(4) == 0 ? Arrays.asList(ix.ids[rnd.nextInt(ix.n)]) : Collections.emptyList());
    }
    DoubleSupplier u = () -> ThreadLocalRandom.current().nextDouble();
    BitSet none = new BitSet();
    List<String> chosen = Collections.emptyList();
    long sink = 0;
    for (int k = 0; k < warmup; k++) {
      int v = k % variants;
      sink += PlacementPlan.plan(ix, 3, 134_217_728L, writers[v], chosen, excluded.get(v), none, u).nodes.length;
    }
    long[] ns = new long[calls];
    int shortCalls = 0;
    for (int k = 0; k < calls; k++) {
      int v = k % variants;
      long t0 = System.nanoTime();
      Algorithm2.Choice c = PlacementPlan.plan(ix, 3, 134_217_728L, writers[v], chosen, excluded.get(v), none, u);
      ns[k] = System.nanoTime() - t0;
      sink += c.nodes.length;
      if (c.nodes.length < 3) {
        shortCalls++;
      }
    }
    Arrays.sort(ns);
    double mean = Arrays.stream(ns).average().orElse(0) / 1000.0;
    String json = String.format(java.util.Locale.ROOT,
        "{\"datanodes\":%d,\"calls\":%d,\"warmup_calls\":%d,\"replication\":3,\"p50_us\":%.3f,\"p99_us\":%.3f,"
            + "\"p999_us\":%.3f,\"max_us\":%.3f,\"mean_us\":%.3f,\"short_answers\":%d,\"java\":\"%s\",\"checksum\":%d}",
        ix.n, calls, warmup, pct(ns, 0.50), pct(ns, 0.99), pct(ns, 0.999), ns[ns.length - 1] / 1000.0, mean,
        shortCalls, System.getProperty("java.version"), sink);
    Files.write(Paths.get(args[1]), (json + "\n").getBytes(StandardCharsets.UTF_8));
    System.out.println(json);
  }

  private static double pct(long[] sorted, double q) {
    int i = (int) Math.ceil(q * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1000.0;
  }
}
