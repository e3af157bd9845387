package org.harvester.shim.common;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The node ordering the ResourceManager plug-in caches (schema {@code harvester.node-ordering.v1},
 * served at {@code GET /v1/yarn/node-ordering}, built by harvester/decisions/node_ordering.py):
 * per job-length class of Algorithm 1 (short, medium, long) the NodeManager ids
 * ({@code host:port}, as YARN's NodeId prints them) best first.
 *
 * <pre>
 * {"schema": "harvester.node-ordering.v1", "version": 7, "generated_at_ms": 1795431979089,
 *  "orderings": {"short": {"node_ids": ["nm1:45454", ...], "reason": "..."}, "medium": {...}, "long": {...}},
 *  "queues": {"root.etl": "long"}}
 * </pre>
 * An empty list for a class means "no advice" (the sidecar's guard has no fresh view): the
 * plug-in then orders as Hadoop's default policy does.
 */
public final class NodeOrderingAdvice {
  public static final String SCHEMA = "harvester.node-ordering.v1";

  public final long version;
  public final long generatedAtMs;
  private final Map<String, List<String>> byJobType;
  private final Map<String, Map<String, Integer>> ranks;

  private NodeOrderingAdvice(long version, long generatedAtMs, Map<String, List<String>> byJobType) {
    this.version = version;
    this.generatedAtMs = generatedAtMs;
    this.byJobType = byJobType;
    Map<String, Map<String, Integer>> r = new HashMap<>();
    for (Map.Entry<String, List<String>> e : byJobType.entrySet()) {
      Map<String, Integer> rank = new HashMap<>();
      for (String id : e.getValue()) {
        rank.putIfAbsent(id, rank.size());
      }
      r.put(e.getKey(), Collections.unmodifiableMap(rank));
    }
    this.ranks = Collections.unmodifiableMap(r);
  }

  /** The advised order for a job type, best first; empty when there is none. */
  public List<String> ordering(String jobType) {
    List<String> ids = byJobType.get(jobType);
    return ids == null ? Collections.emptyList() : ids;
  }

  /** Node id to its position in the advised order of {@code jobType} (absent: not advised). */
  public Map<String, Integer> ranks(String jobType) {
    Map<String, Integer> r = ranks.get(jobType);
    return r == null ? Collections.emptyMap() : r;
  }

  public static NodeOrderingAdvice parse(String text) {
    JsonNode doc = Json.parse(text);
    String schema = Json.text(doc, "schema", "ordering");
    if (!SCHEMA.equals(schema)) {
      throw new AdviceFormatException("ordering.schema: expected " + SCHEMA + ", got " + schema);
    }
    long version = Json.integer(doc, "version", "ordering");
    if (version < 0) {
      throw new AdviceFormatException("ordering.version: must be >= 0");
    }
    JsonNode orderings = Json.object(doc, "orderings", "ordering");
    Map<String, List<String>> by = new HashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = orderings.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String where = "ordering.orderings." + e.getKey();
      if (!e.getValue().isObject()) {
        throw new AdviceFormatException(where + ": expected an object");
      }
      JsonNode ids = Json.array(e.getValue(), "node_ids", where);
      List<String> list = new ArrayList<>(ids.size());
      for (int i = 0; i < ids.size(); i++) {
        if (!ids.get(i).isTextual() || ids.get(i).textValue().isEmpty()) {
          throw new AdviceFormatException(where + ".node_ids[" + i + "]: expected a non-empty string");
        }
        list.add(ids.get(i).textValue());
      }
      by.put(e.getKey(), Collections.unmodifiableList(list));
    }
    return new NodeOrderingAdvice(version, Json.integer(doc, "generated_at_ms", "ordering"),
        Collections.unmodifiableMap(by));
  }
}
