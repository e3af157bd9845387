package org.harvester.shim.common;

import java.util.Iterator;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the CapacityScheduler asked of a node-lookup policy and what it took (YARN-H, OSDI'16
 * §4.1: did containers land on the advised nodes?). Hadoop 3.3.6 hands the policy's iterator to
 * RegularContainerAllocator#allocate, which walks it and stops on the first node where it
 * allocates or reserves a container, or walks to the end when nothing fits. So the last node an
 * iterator handed out is the node taken, and an iterator that reports no next node took none.
 *
 * <p>Each lookup sits in exactly one outcome at a time, moved as the scheduler walks (no
 * callback tells when it stops): advised node at position p (buckets 1, 2, 3-4, ... 65+),
 * a node the advice did not name, or none. Lock-free: a few LongAdder updates per node walked.
 */
public final class LookupCounters {
  private static final String[] BUCKETS = {"1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", "65+"};

  private final LongAdder refreshes = new LongAdder();
  private final LongAdder lookups = new LongAdder();
  private final LongAdder walked = new LongAdder();
  private final LongAdder[] advisedAt = new LongAdder[BUCKETS.length];
  private final LongAdder nonAdvised = new LongAdder();
  private final LongAdder none = new LongAdder();

  public LookupCounters() {
    for (int i = 0; i < advisedAt.length; i++) {
      advisedAt[i] = new LongAdder();
    }
  }

  /** The bucket of a 1-based position: 1, 2, 3-4, 5-8, ..., 65+. */
  static int bucket(int position) {
    return position <= 1 ? 0 : Math.min(BUCKETS.length - 1, 32 - Integer.numberOfLeadingZeros(position - 1));
  }

  /** The sorter recomputed an order (about once per sorting interval per partition). */
  public void refreshed() {
    refreshes.increment();
  }

  /** Count one lookup: the returned iterator walks {@code order}, whose first {@code advisedHead} nodes are advised. */
  public <N> Iterator<N> track(Iterator<N> order, int advisedHead) {
    lookups.increment();
    return new Tracked<>(order, advisedHead);
  }

  private final class Tracked<N> implements Iterator<N> {
    private final Iterator<N> inner;
    private final int advisedHead;
    private int position;
    private LongAdder outcome; // null until the scheduler walks or finds nothing
    private boolean exhausted;

    Tracked(Iterator<N> inner, int advisedHead) {
      this.inner = inner;
      this.advisedHead = advisedHead;
    }

    @Override
    public boolean hasNext() {
      boolean more = inner.hasNext();
      if (!more && !exhausted) { // walked to the end: the last node handed out was not taken either
        exhausted = true;
        move(none);
      }
      return more;
    }

    @Override
    public N next() {
      N n = inner.next();
      position++;
      walked.increment();
      move(position <= advisedHead ? advisedAt[bucket(position)] : nonAdvised);
      return n;
    }

    private void move(LongAdder to) {
      if (to != outcome) {
        to.increment(); // before the decrement: a concurrent JMX read may over-count by one, never lose one
        if (outcome != null) {
          outcome.decrement();
        }
        outcome = to;
      }
    }
  }

  public long refreshes() {
    return refreshes.sum();
  }

  public long lookups() {
    return lookups.sum();
  }

  public long nodesWalked() {
    return walked.sum();
  }

  /** Lookups whose walk stopped on an advised node. */
  public long advisedNodeTaken() {
    long n = 0;
    for (LongAdder a : advisedAt) {
      n += a.sum();
    }
    return n;
  }

  /** Lookups whose walk stopped on the first node of an advised order. */
  public long firstAdvisedNodeTaken() {
    return advisedAt[0].sum();
  }

  /** Lookups whose walk stopped on a node the advice did not name (any node of Hadoop's own order). */
  public long nonAdvisedNodeTaken() {
    return nonAdvised.sum();
  }

  /** Lookups that walked every node without stopping: nothing fit. */
  public long noNodeTaken() {
    return none.sum();
  }

  /** "1=40,2=3,5-8=1": where in the advised order the walks stopped (positions 1-based, non-zero buckets). */
  public String takenPositions() {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < BUCKETS.length; i++) {
      long n = advisedAt[i].sum();
      if (n != 0) {
        b.append(b.length() == 0 ? "" : ",").append(BUCKETS[i]).append('=').append(n);
      }
    }
    return b.toString();
  }
}
