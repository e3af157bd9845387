// Oracle for harvester/models/java_hashmap.py (tests/models/test_java_hashmap.py): a real
// java.util.HashMap of RecurrenceId-like keys (hashCode = pipelineId.hashCode() ^ runId.hashCode(),
// as hadoop-resourceestimator's RecurrenceId). Reads operations from stdin, one per line:
//   put P R | del P R | dump | filter P
// and prints, for dump and filter, the keys in iteration order as "P R" lines, then "--".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

public class HashMapOrder {
  static final class Key {
    final String p, r;
    Key(String p, String r) { this.p = p; this.r = r; }
    @Override public int hashCode() { return p.hashCode() ^ r.hashCode(); }
    @Override public boolean equals(Object o) {
      return o instanceof Key && ((Key) o).p.equals(p) && ((Key) o).r.equals(r);
    }
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    Map<Key, Integer> store = new HashMap<>();
    StringBuilder out = new StringBuilder();
    String line;
    while ((line = in.readLine()) != null) {
      String[] f = line.split(" ");
      if (f[0].equals("put")) {
        store.putIfAbsent(new Key(f[1], f[2]), 1);
      } else if (f[0].equals("del")) {
        store.remove(new Key(f[1], f[2]));
      } else {
        Map<Key, Integer> shown = store;
        if (f[0].equals("filter")) {
          shown = new HashMap<>();
          for (Map.Entry<Key, Integer> e : store.entrySet()) {
            if (e.getKey().p.equals(f[1])) {
              shown.put(e.getKey(), e.getValue());
            }
          }
        }
        for (Key k : shown.keySet()) {
          out.append(k.p).append(' ').append(k.r).append('\n');
        }
        out.append("--\n");
      }
    }
    System.out.write(out.toString().getBytes(StandardCharsets.UTF_8));
    System.out.flush();
  }
}
