package org.pgetl.destination.iceberg;

import java.util.Map;
import java.util.TreeMap;

/**
 * A set of copy batch numbers kept as ranges ({@code 0-57,60-99}), small enough for a table
 * property however many batches a copy has: the batches of a copy partition come in order, so the
 * committed ones form few ranges.
 */
final class BatchSet {
  // first -> last, inclusive, non-overlapping, non-adjacent
  private final TreeMap<Long, Long> ranges = new TreeMap<>();

  boolean contains(long n) {
    Map.Entry<Long, Long> e = ranges.floorEntry(n);
    return e != null && e.getValue() >= n;
  }

  void add(long n) {
    if (contains(n)) {
      return;
    }
    long first = n;
    long last = n;
    Map.Entry<Long, Long> below = ranges.floorEntry(n);
    if (below != null && below.getValue() == n - 1) {
      first = below.getKey();
      ranges.remove(below.getKey());
    }
    Long above = ranges.get(n + 1);
    if (above != null) {
      last = above;
      ranges.remove(n + 1);
    }
    ranges.put(first, last);
  }

  void addAll(BatchSet other) {
    for (Map.Entry<Long, Long> e : other.ranges.entrySet()) {
      for (long n = e.getKey(); n <= e.getValue(); n++) {
        add(n);
      }
    }
  }

  BatchSet copy() {
    BatchSet c = new BatchSet();
    c.ranges.putAll(ranges);
    return c;
  }

  long size() {
    long n = 0;
    for (Map.Entry<Long, Long> e : ranges.entrySet()) {
      n += e.getValue() - e.getKey() + 1;
    }
    return n;
  }

  boolean isEmpty() {
    return ranges.isEmpty();
  }

  void clear() {
    ranges.clear();
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    for (Map.Entry<Long, Long> e : ranges.entrySet()) {
      if (sb.length() > 0) {
        sb.append(',');
      }
      sb.append(e.getKey());
      if (!e.getValue().equals(e.getKey())) {
        sb.append('-').append(e.getValue());
      }
    }
    return sb.toString();
  }

  static BatchSet parse(String text) {
    BatchSet s = new BatchSet();
    if (text.isEmpty()) {
      return s;
    }
    for (String part : text.split(",", -1)) {
      int dash = part.indexOf('-');
      long first = Long.parseLong(dash < 0 ? part : part.substring(0, dash));
      long last = dash < 0 ? first : Long.parseLong(part.substring(dash + 1));
      s.ranges.put(first, last);
    }
    return s;
  }
}
