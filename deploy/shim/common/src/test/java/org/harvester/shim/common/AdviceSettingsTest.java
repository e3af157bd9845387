package org.harvester.shim.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AdviceSettingsTest {
  @Test
  void defaultsAndClampedLongPoll() {
    Map<String, String> conf = new HashMap<>();
    conf.put("p.advice.url", " http://127.0.0.1:9464/v1/hdfs/placement-table ");
    conf.put("p.stale.after.ms", "10000");
    conf.put("p.long.poll.seconds", "30");
    AdviceSettings s = AdviceSettings.from(conf::get, "p.");
    assertTrue(s.enabled);
    assertEquals(5, s.longPollSeconds, "a long-poll must end well inside the staleness bound");
    assertEquals(500, s.backoffMinMs);
  }

  @Test
  void noUrlMeansDisabled() {
    assertFalse(AdviceSettings.from(k -> null, "p.").enabled);
  }

  @Test
  void badValuesNameTheKey() {
    Map<String, String> conf = new HashMap<>();
    conf.put("p.advice.url", "ftp://x");
    assertTrue(assertThrows(IllegalArgumentException.class, () -> AdviceSettings.from(conf::get, "p."))
        .getMessage().startsWith("p.advice.url"));
    conf.put("p.advice.url", "http://x");
    conf.put("p.stale.after.ms", "soon");
    assertTrue(assertThrows(IllegalArgumentException.class, () -> AdviceSettings.from(conf::get, "p."))
        .getMessage().startsWith("p.stale.after.ms"));
    conf.put("p.stale.after.ms", "0");
    assertThrows(IllegalArgumentException.class, () -> AdviceSettings.from(conf::get, "p."));
    conf.remove("p.stale.after.ms");
    conf.put("p.enabled", "yes");
    assertTrue(assertThrows(IllegalArgumentException.class, () -> AdviceSettings.from(conf::get, "p."))
        .getMessage().startsWith("p.enabled"));
  }
}
