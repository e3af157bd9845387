// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
package org.apache.hadoop.net;

public class NodeBase implements Node {
  public static final char PATH_SEPARATOR = '/';
  public static final String PATH_SEPARATOR_STR = "/";
  public static final String ROOT = "";

  public static String normalize(String path) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public static String getPath(Node node) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public String getName() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public String getNetworkLocation() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public void setNetworkLocation(String location) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public Node getParent() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public void setParent(Node parent) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public int getLevel() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public void setLevel(int level) {
    throw new UnsupportedOperationException("compile-only stub");
  }
}
