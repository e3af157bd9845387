package org.harvester.shim.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

class NodeOrderingTest {
  static final String DOC = "{\"schema\":\"harvester.node-ordering.v1\",\"version\":5,\"generated_at_ms\":12,"
      + "\"orderings\":{\"short\":{\"node_ids\":[\"c:1\",\"a:1\"],\"reason\":\"r\"},"
      + "\"long\":{\"node_ids\":[],\"reason\":\"no fresh guard decision\"}},\"queues\":{\"root.q\":\"short\"}}";

  /** A node as the scheduler sees it: name and allocated MB (the fallback orders by it). */
  static final class N {
    final String id;
    final int allocated;

    N(String id, int allocated) {
      this.id = id;
      this.allocated = allocated;
    }

    @Override
    public String toString() {
      return id;
    }
  }

  static final Comparator<N> USAGE = Comparator.<N>comparingInt(n -> n.allocated).thenComparing(n -> n.id);

  @Test
  void advisedNodesFirstThenResourceUsageOrder() {
    NodeOrderingAdvice a = NodeOrderingAdvice.parse(DOC);
    List<N> nodes = Arrays.asList(new N("a:1", 5), new N("b:1", 1), new N("c:1", 9), new N("d:1", 0));
    List<N> got = NodeOrderer.order(nodes, a.ranks("short"), n -> n.id, USAGE);
    assertEquals("[c:1, a:1, d:1, b:1]", got.toString());
  }

  @Test
  void noAdviceIsHadoopsOrder() {
    NodeOrderingAdvice a = NodeOrderingAdvice.parse(DOC);
    List<N> nodes = Arrays.asList(new N("a:1", 5), new N("b:1", 1), new N("c:1", 9));
    assertEquals("[b:1, a:1, c:1]", NodeOrderer.order(nodes, a.ranks("long"), n -> n.id, USAGE).toString());
    assertEquals("[b:1, a:1, c:1]", NodeOrderer.order(nodes, a.ranks("medium"), n -> n.id, USAGE).toString());
    assertEquals("[b:1, a:1, c:1]", NodeOrderer.order(nodes, Collections.emptyMap(), n -> n.id, USAGE).toString());
  }

  @Test
  void badOrderingIsRejected() {
    String bad = DOC.replace("[\"c:1\",\"a:1\"]", "[\"c:1\",3]");
    assertTrue(assertThrows(AdviceFormatException.class, () -> NodeOrderingAdvice.parse(bad)).getMessage()
        .contains("ordering.orderings.short.node_ids[1]"));
  }
}
