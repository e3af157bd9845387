package org.harvester.shim.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Where a lookup's walk stopped, counted without any callback from the scheduler. */
class LookupCountersTest {
  private static List<Integer> nodes(int n) {
    List<Integer> l = new ArrayList<>();
    for (int i = 1; i <= n; i++) {
      l.add(i);
    }
    return l;
  }

  /** RegularContainerAllocator#allocate: walk until a node fits, or to the end. */
  private static void walk(Iterator<Integer> it, int fitsAt) {
    while (it.hasNext()) {
      if (it.next() == fitsAt) {
        return;
      }
    }
  }

  @Test
  void positionBuckets() {
    int[][] cases = {{1, 0}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {8, 3}, {9, 4}, {16, 4}, {17, 5}, {33, 6}, {64, 6},
        {65, 7}, {1000, 7}};
    for (int[] c : cases) {
      assertEquals(c[1], LookupCounters.bucket(c[0]), "position " + c[0]);
    }
  }

  @Test
  void eachLookupEndsInOneOutcome() {
    LookupCounters c = new LookupCounters();
    List<Integer> order = nodes(70);
    walk(c.track(order.iterator(), 66), 1); // first advised node
    walk(c.track(order.iterator(), 66), 4); // advised, position 4
    walk(c.track(order.iterator(), 66), 66); // advised, last of the advised head
    walk(c.track(order.iterator(), 66), 67); // past the advised head
    walk(c.track(order.iterator(), 66), 0); // nothing fits: all 70 walked
    walk(c.track(order.iterator(), 0), 2); // Hadoop's order: any node is not advised
    c.track(order.iterator(), 66); // handed out, never walked: no outcome yet
    assertEquals(7, c.lookups());
    assertEquals(1 + 4 + 66 + 67 + 70 + 2, c.nodesWalked());
    assertEquals(3, c.advisedNodeTaken());
    assertEquals(1, c.firstAdvisedNodeTaken());
    assertEquals(2, c.nonAdvisedNodeTaken());
    assertEquals(1, c.noNodeTaken());
    assertEquals("1=1,3-4=1,65+=1", c.takenPositions());
  }

  @Test
  void anEmptyOrderTakesNothing() {
    LookupCounters c = new LookupCounters();
    Iterator<Integer> it = c.track(new ArrayList<Integer>().iterator(), 0);
    assertFalse(it.hasNext());
    assertFalse(it.hasNext(), "asked twice, counted once");
    assertEquals(1, c.noNodeTaken());
    assertEquals(0, c.nodesWalked());
  }

  /** Later Hadoop releases wrap the iterator in a filter that pulls one node ahead: still one outcome. */
  @Test
  void aWrapperPullingAheadCountsTheNodeItHandsOn() {
    LookupCounters c = new LookupCounters();
    Iterator<Integer> inner = c.track(nodes(5).iterator(), 3);
    Iterator<Integer> skipEven = new Iterator<Integer>() { // skips "dead" nodes 2 and 4
      private Integer cached;

      @Override
      public boolean hasNext() {
        while (cached == null && inner.hasNext()) {
          Integer n = inner.next();
          cached = n % 2 == 0 ? null : n;
        }
        return cached != null;
      }

      @Override
      public Integer next() {
        hasNext();
        Integer n = cached;
        cached = null;
        return n;
      }
    };
    walk(skipEven, 3);
    assertEquals(3, c.nodesWalked());
    assertEquals(1, c.advisedNodeTaken());
    assertEquals("3-4=1", c.takenPositions());
  }
}
