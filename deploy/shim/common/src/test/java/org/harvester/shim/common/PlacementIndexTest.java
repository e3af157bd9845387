package org.harvester.shim.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PlacementIndexTest {
  @Test
  void parsesTheSidecarsTable() {
    PlacementIndex ix = PlacementIndex.parse(Tables.grid9(41, 2));
    assertEquals(41, ix.version);
    assertEquals(18, ix.n);
    assertEquals(2, ix.nRacks);
    assertEquals(9, ix.nEnvs);
    assertEquals(ix.resolve("10.0.8.1:9866"), ix.resolve("h221"));
    assertEquals(-1, ix.resolve("10.9.9.9:1"));
    assertEquals(-1, ix.resolveId("h221"), "resolveId takes exact ids only");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "{\"schema\":\"other\"}|table.schema",
      "[1,2]|document: expected a JSON object",
      "not json|document: not JSON",
      "{\"schema\":\"harvester.hdfs-placement.v1\",\"version\":-1,\"generated_at_ms\":1,\"busy_cpu_threshold\":0.9,\"cells\":[],\"datanodes\":[]}|version",
      "{\"schema\":\"harvester.hdfs-placement.v1\",\"version\":1,\"generated_at_ms\":1,\"busy_cpu_threshold\":2,\"cells\":[],\"datanodes\":[]}|busy_cpu_threshold",
      "{\"schema\":\"harvester.hdfs-placement.v1\",\"version\":1,\"generated_at_ms\":1,\"busy_cpu_threshold\":0.5,\"cells\":[],\"datanodes\":[]}|table.cells",
      "{\"schema\":\"harvester.hdfs-placement.v1\",\"version\":\"1\",\"generated_at_ms\":1,\"busy_cpu_threshold\":0.5,\"cells\":[],\"datanodes\":[]}|table.version: expected an integer",
  })
  void badDocumentsNameTheField(String doc, String expected) {
    AdviceFormatException e = assertThrows(AdviceFormatException.class, () -> PlacementIndex.parse(doc));
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }

  @Test
  void badNodeIsNamed() {
    String bad = Tables.table(1, Tables.node("a:1", "a", "/r", "t", "e", 3, 0, 5, false));
    assertTrue(assertThrows(AdviceFormatException.class, () -> PlacementIndex.parse(bad)).getMessage()
        .contains("datanodes[0]: cell (3, 0) outside the grid"));
    String dup = Tables.table(1, Tables.node("a:1", "a", "/r", "t", "e", 0, 0, 5, false),
        Tables.node("a:1", "b", "/r", "t", "e", 0, 0, 5, false));
    assertTrue(assertThrows(AdviceFormatException.class, () -> PlacementIndex.parse(dup)).getMessage()
        .contains("duplicate datanode_id a:1"));
  }
}
