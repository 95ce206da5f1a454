package io.tensorlane.contract;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Message size → algorithm. Ranges are half-open {@code [minBytes, maxBytes)}, sorted, contiguous from 1 byte,
 * and together cover every size up to {@link #maxBytes()}; larger messages are not handled by the table
 * ({@link #select} throws) — callers route them to NCCL. Pure value; JSON via Jackson.
 *
 * <pre>{"worldSize":8,"source":"bench ...","ranges":[{"minBytes":1,"maxBytes":524288,"algorithm":"OneStage"}, ...]}</pre>
 */
public record AlgorithmTable(int worldSize, String source, List<Range> ranges) {
  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  /** One half-open size range. */
  public record Range(long minBytes, long maxBytes, Algorithm algorithm) {
    @JsonCreator
    public Range(@JsonProperty("minBytes") long minBytes, @JsonProperty("maxBytes") long maxBytes,
        @JsonProperty("algorithm") Algorithm algorithm) {
      if (algorithm == null) {
        throw new IllegalArgumentException("range [" + minBytes + ", " + maxBytes + "): algorithm is missing");
      }
      if (minBytes < 1 || maxBytes <= minBytes) {
        throw new IllegalArgumentException("range [" + minBytes + ", " + maxBytes + "): need 1 <= minBytes < maxBytes");
      }
      this.minBytes = minBytes;
      this.maxBytes = maxBytes;
      this.algorithm = algorithm;
    }

    boolean contains(long bytes) {
      return bytes >= minBytes && bytes < maxBytes;
    }
  }

  @JsonCreator
  public AlgorithmTable(@JsonProperty("worldSize") int worldSize, @JsonProperty("source") String source,
      @JsonProperty("ranges") List<Range> ranges) {
    if (worldSize < 1 || worldSize > BufferLayout.MAX_RANKS) {
      throw new IllegalArgumentException("algorithm table: worldSize must be 1.." + BufferLayout.MAX_RANKS + ", got " + worldSize);
    }
    if (ranges == null || ranges.isEmpty()) {
      throw new IllegalArgumentException("algorithm table: at least one range is required");
    }
    List<Range> sorted = new ArrayList<>(ranges);
    sorted.sort(Comparator.comparingLong(Range::minBytes));
    if (sorted.get(0).minBytes() != 1) {
      throw new IllegalArgumentException("algorithm table: the first range must start at 1 byte, starts at " + sorted.get(0).minBytes());
    }
    for (int i = 1; i < sorted.size(); i++) {
      Range prev = sorted.get(i - 1);
      Range cur = sorted.get(i);
      if (cur.minBytes() != prev.maxBytes()) {
        throw new IllegalArgumentException("algorithm table: ranges must be contiguous, [" + prev.minBytes() + ", " + prev.maxBytes()
            + ") is followed by [" + cur.minBytes() + ", " + cur.maxBytes() + ")");
      }
    }
    this.worldSize = worldSize;
    this.source = source == null ? "" : source;
    this.ranges = List.copyOf(sorted);
  }

  /** A table that uses one algorithm for every size below {@code maxBytesExclusive}. */
  public static AlgorithmTable single(int worldSize, Algorithm algorithm, long maxBytesExclusive) {
    return new AlgorithmTable(worldSize, "single " + algorithm, List.of(new Range(1, maxBytesExclusive, algorithm)));
  }

  /**
   * The untuned default: OneStage up to 512 KiB (latency-bound), TwoStage above, up to and including
   * {@code maxMessageBytes}. World size 2 uses OneStage throughout (2-stage saves nothing for two ranks).
   */
  public static AlgorithmTable defaults(int worldSize, long maxMessageBytes) {
    long end = Math.addExact(maxMessageBytes, 1);
    long split = 512L * 1024;
    if (worldSize <= 2 || end <= split) {
      return new AlgorithmTable(worldSize, "default", List.of(new Range(1, end, Algorithm.OneStage)));
    }
    return new AlgorithmTable(worldSize, "default",
        List.of(new Range(1, split, Algorithm.OneStage), new Range(split, end, Algorithm.TwoStage)));
  }

  /** Largest message size (exclusive) the table covers. */
  public long maxBytes() {
    return ranges.get(ranges.size() - 1).maxBytes();
  }

  /** Whether {@code bytes} falls into a range. */
  public boolean covers(long bytes) {
    return bytes >= 1 && bytes < maxBytes();
  }

  /** The algorithm for a message of {@code bytes} bytes per rank. */
  public Algorithm select(long bytes) {
    if (bytes < 1) {
      throw new IllegalArgumentException("message size must be >= 1 byte, got " + bytes);
    }
    int lo = 0;
    int hi = ranges.size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      Range r = ranges.get(mid);
      if (bytes < r.minBytes()) {
        hi = mid - 1;
      } else if (bytes >= r.maxBytes()) {
        lo = mid + 1;
      } else {
        return r.algorithm();
      }
    }
    throw new IllegalArgumentException("message of " + bytes + " bytes is beyond the algorithm table (covers < " + maxBytes() + " bytes)");
  }

  /**
   * Merges adjacent ranges with the same algorithm; {@code picks} are (size, algorithm) points sorted by size,
   * each point's algorithm holding from the midpoint (geometric) to its neighbours.
   */
  public static AlgorithmTable fromMeasuredPoints(int worldSize, String source, long[] sizes, Algorithm[] best, long maxBytesExclusive) {
    for (int i = 1; i < sizes.length; i++) {
      if (sizes[i] <= sizes[i - 1]) {
        throw new IllegalArgumentException("measured sizes must be strictly ascending");
      }
    }
    if (sizes.length == 0 || sizes.length != best.length) {
      throw new IllegalArgumentException("need one best algorithm per measured size, got " + sizes.length + " sizes and " + best.length);
    }
    List<Range> out = new ArrayList<>();
    long start = 1;
    for (int i = 0; i < sizes.length; i++) {
      long end = i + 1 < sizes.length ? (long) Math.sqrt((double) sizes[i] * sizes[i + 1]) : maxBytesExclusive;
      end = Math.max(end, start + 1);
      if (i + 1 == sizes.length) {
        end = Math.max(maxBytesExclusive, start + 1);
      }
      if (!out.isEmpty() && out.get(out.size() - 1).algorithm() == best[i]) {
        Range last = out.remove(out.size() - 1);
        out.add(new Range(last.minBytes(), end, best[i]));
      } else {
        out.add(new Range(start, end, best[i]));
      }
      start = end;
    }
    return new AlgorithmTable(worldSize, source, out);
  }

  public String toJson() {
    try {
      return JSON.writeValueAsString(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialize algorithm table", e);
    }
  }

  public static AlgorithmTable fromJson(String json) {
    try {
      return JSON.readValue(json, AlgorithmTable.class);
    } catch (JsonProcessingException e) {
      Throwable cause = e.getCause() instanceof IllegalArgumentException ? e.getCause() : e;
      throw new IllegalArgumentException("invalid algorithm table JSON: " + cause.getMessage(), e);
    }
  }

  public void save(Path file) throws IOException {
    Files.writeString(file, toJson());
  }

  public static AlgorithmTable load(Path file) throws IOException {
    return fromJson(Files.readString(file));
  }
}
