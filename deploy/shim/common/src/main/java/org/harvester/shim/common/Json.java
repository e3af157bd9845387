package org.harvester.shim.common;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;

/**
 * Strict field access over Jackson's tree (Hadoop's own Jackson, declared provided): every
 * accessor names the field it rejects, so a bad document is reported, never half-used.
 */
final class Json {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private Json() {
  }

  static JsonNode parse(String text) {
    try {
      JsonNode doc = MAPPER.readTree(text);
      if (doc == null || !doc.isObject()) {
        throw new AdviceFormatException("document: expected a JSON object");
      }
      return doc;
    } catch (IOException e) {
      throw new AdviceFormatException("document: not JSON (" + e.getMessage() + ")");
    }
  }

  static JsonNode field(JsonNode obj, String key, String where) {
    JsonNode v = obj.get(key);
    if (v == null || v.isNull()) {
      throw new AdviceFormatException(where + "." + key + ": missing");
    }
    return v;
  }

  static long integer(JsonNode obj, String key, String where) {
    JsonNode v = field(obj, key, where);
    if (!v.isIntegralNumber() || !v.canConvertToLong()) {
      throw new AdviceFormatException(where + "." + key + ": expected an integer, got " + v);
    }
    return v.longValue();
  }

  static double number(JsonNode obj, String key, String where) {
    JsonNode v = field(obj, key, where);
    if (!v.isNumber()) {
      throw new AdviceFormatException(where + "." + key + ": expected a number, got " + v);
    }
    return v.doubleValue();
  }

  static String text(JsonNode obj, String key, String where) {
    JsonNode v = field(obj, key, where);
    if (!v.isTextual()) {
      throw new AdviceFormatException(where + "." + key + ": expected a string, got " + v);
    }
    return v.textValue();
  }

  static boolean bool(JsonNode obj, String key, String where) {
    JsonNode v = field(obj, key, where);
    if (!v.isBoolean()) {
      throw new AdviceFormatException(where + "." + key + ": expected a boolean, got " + v);
    }
    return v.booleanValue();
  }

  static JsonNode array(JsonNode obj, String key, String where) {
    JsonNode v = field(obj, key, where);
    if (!v.isArray()) {
      throw new AdviceFormatException(where + "." + key + ": expected an array");
    }
    return v;
  }

  static JsonNode object(JsonNode obj, String key, String where) {
    JsonNode v = field(obj, key, where);
    if (!v.isObject()) {
      throw new AdviceFormatException(where + "." + key + ": expected an object");
    }
    return v;
  }
}
