// Compile-only stub (never shipped): signature from ../shared/fixtures/hadoop-3.3.6-plugin-api.txt
// or the Hadoop 3.3.6 sources. The real class comes from Hadoop's classpath at run time.
// Not in the fixture: the long-stable accessors of hadoop-common 3.3.6 Configuration.java.
package org.apache.hadoop.conf;

public class Configuration {
  public Configuration() {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public Configuration(boolean loadDefaults) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public void addResource(String name) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public String get(String name) {
    throw new UnsupportedOperationException("compile-only stub");
  }

  public String get(String name, String defaultValue) {
    throw new UnsupportedOperationException("compile-only stub");
  }
}
