package org.harvester.shim.common;

import java.util.function.DoubleSupplier;

/**
 * SplitMix64 (Steele, Lea, Flood 2014): the documented random stream that Python
 * ({@code hdfs_placement/splitmix.py}) and Java both implement, so that Algorithm 2 makes
 * identical choices in both languages given the same seed (the cross-language test vectors).
 *
 * <pre>
 *   state += 0x9E3779B97F4A7C15
 *   z = state; z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >>> 27)) * 0x94D049BB133111EB
 *   next = z ^ (z >>> 31)                      (all arithmetic modulo 2^64)
 *   uniform = (next >>> 11) * 2^-53            (a double in [0, 1), exact in both languages)
 * </pre>
 *
 * Only the tests use it: inside the NameNode the plug-in draws from ThreadLocalRandom.
 */
public final class SplitMix64 implements DoubleSupplier {
  private long state;

  public SplitMix64(long seed) {
    this.state = seed;
  }

  public long nextLong() {
    state += 0x9E3779B97F4A7C15L;
    long z = state;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  @Override
  public double getAsDouble() {
    return (nextLong() >>> 11) * 0x1.0p-53;
  }
}
