package org.harvester.shim.common;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Replays the vectors deploy/shim/make_vectors.py writes from the Python code: the Java
 * Algorithm 2 must pick the same DataNodes (and relax the same constraints) from the same
 * SplitMix64 stream, and the replica rules must give the same answers.
 */
class CrossLanguageVectorsTest {
  private static JsonNode doc;

  @BeforeAll
  static void load() throws Exception {
    String path = System.getProperty("harvester.vectors", "");
    assertFalse(path.isEmpty(), "-Dharvester.vectors=<file> is required (make shim-test generates it)");
    doc = new ObjectMapper().readTree(new File(path));
    assertEquals("harvester.shim-vectors.v1", doc.get("schema").asText());
    assertTrue(doc.get("cases").size() >= 5, "too few cases in " + path);
  }

  private static List<String> strings(JsonNode arr) {
    List<String> out = new ArrayList<>();
    if (arr != null && !arr.isNull()) {
      arr.forEach(x -> out.add(x.asText()));
    }
    return out;
  }

  private static PlacementIndex table(JsonNode c) {
    return PlacementIndex.parse(c.get("table").toString());
  }

  @Test
  void splitmixStreamIsPythons() {
    JsonNode s = doc.get("splitmix");
    SplitMix64 rng = new SplitMix64(s.get("seed").asLong());
    for (JsonNode v : s.get("u64")) {
      assertEquals(Long.parseUnsignedLong(v.asText()), rng.nextLong());
    }
    for (JsonNode v : s.get("uniform")) {
      assertEquals(v.asDouble(), rng.getAsDouble(), 0.0);
    }
  }

  @Test
  void algorithm2ChoosesWhatPythonChooses() {
    int checked = 0;
    for (JsonNode c : doc.get("cases")) {
      PlacementIndex ix = table(c);
      for (JsonNode q : c.get("choose")) {
        List<String> existing = strings(q.get("existing"));
        int[] ex = existing.stream().mapToInt(ix::resolve).toArray();
        BitSet excluded = new BitSet();
        for (String e : strings(q.get("excluded"))) {
          if (ix.resolve(e) >= 0) {
            excluded.set(ix.resolve(e));
          }
        }
        int[] favored = strings(q.get("favored")).stream().mapToInt(ix::resolve).filter(i -> i >= 0).toArray();
        String writer = q.get("writer").isNull() ? null : q.get("writer").asText();
        int nNew = q.get("replication").asInt() - existing.size();
        Algorithm2.Choice got = Algorithm2.choose(ix, nNew, q.get("block_size").asLong(),
            new SplitMix64(q.get("seed").asLong()), ix.resolve(writer), ex, excluded, favored);
        List<String> ids = new ArrayList<>();
        for (int i : got.nodes) {
          ids.add(ix.ids[i]);
        }
        String where = c.get("name").asText() + " seed " + q.get("seed").asText();
        assertEquals(strings(q.get("expect").get("targets")), ids, where);
        JsonNode relaxed = q.get("expect").get("relaxed");
        for (int k = 0; k < got.relaxed.length; k++) {
          assertArrayEquals(strings(relaxed.get(k)).toArray(new String[0]), got.relaxed[k], where + " target " + k);
        }
        checked++;
      }
    }
    assertTrue(checked >= 200, "only " + checked + " choose vectors");
  }

  @Test
  void replicaRulesAnswerWhatPythonAnswers() {
    for (JsonNode c : doc.get("cases")) {
      PlacementIndex ix = table(c);
      String name = c.get("name").asText();
      for (JsonNode v : c.get("verify")) {
        ReplicaRules.Status st = ReplicaRules.verify(ix, strings(v.get("replicas")), v.get("replication").asInt());
        JsonNode e = v.get("expect");
        assertEquals(e.get("satisfied").asBoolean(), st.satisfied, name + " verify " + v);
        assertEquals(strings(e.get("kinds")), st.kinds(), name + " verify " + v);
        assertEquals(strings(e.get("unknown")), st.unknown, name + " verify " + v);
      }
      for (JsonNode d : c.get("delete")) {
        List<String> cands = d.get("candidates").isNull() ? null : strings(d.get("candidates"));
        String hint = d.get("hint").isNull() ? null : d.get("hint").asText();
        assertEquals(strings(d.get("expect")), ReplicaRules.chooseReplicasToDelete(ix, strings(d.get("replicas")),
            d.get("replication").asInt(), cands, hint), name + " delete " + d);
      }
      for (JsonNode m : c.get("movable")) {
        assertEquals(m.get("expect").asBoolean(), ReplicaRules.isMovable(ix, strings(m.get("replicas")),
            m.get("source").asText(), m.get("target").asText()), name + " movable " + m);
      }
    }
  }
}
