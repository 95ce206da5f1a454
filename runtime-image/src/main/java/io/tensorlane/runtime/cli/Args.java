package io.tensorlane.runtime.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Pure parsers for CLI values (sizes, integer ranges, device maps), with clear messages. */
public final class Args {
    private Args() {}

    /** "2..8" or "2,4,8" (or a mix: "2..4,8"). */
    public static List<Integer> intList(String spec) {
        List<Integer> out = new ArrayList<>();
        for (String part : spec.split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            try {
                int dots = p.indexOf("..");
                if (dots >= 0) {
                    int a = Integer.parseInt(p.substring(0, dots).trim());
                    int b = Integer.parseInt(p.substring(dots + 2).trim());
                    if (b < a) {
                        throw new IllegalArgumentException("range " + p + " is empty");
                    }
                    for (int i = a; i <= b; i++) {
                        out.add(i);
                    }
                } else {
                    out.add(Integer.parseInt(p));
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + spec + "' is not a list of integers like 2..8 or 2,4,8");
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("empty list '" + spec + "'");
        }
        return out;
    }

    /** "4096", "42KiB", "64MiB", "1GiB" (binary units; "k"/"m"/"g" are accepted as the same). */
    public static long bytes(String spec) {
        String s = spec.trim().toLowerCase(Locale.ROOT).replace("ib", "").replace("b", "");
        long mul = 1;
        if (s.endsWith("k")) {
            mul = 1L << 10;
        } else if (s.endsWith("m")) {
            mul = 1L << 20;
        } else if (s.endsWith("g")) {
            mul = 1L << 30;
        }
        if (mul != 1) {
            s = s.substring(0, s.length() - 1);
        }
        try {
            long v = Long.parseLong(s.trim());
            if (v < 0) {
                throw new NumberFormatException();
            }
            return Math.multiplyExact(v, mul);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("'" + spec + "' is not a size like 4096, 42KiB or 64MiB");
        }
    }

    /**
     * Device of each rank: the explicit list when given (its length must equal the world size), else rank r on
     * device r mod deviceCount — real ranks when there are enough GPUs, virtual ranks otherwise.
     */
    public static List<Integer> devices(int world, int deviceCount, List<Integer> explicit) {
        if (explicit != null && !explicit.isEmpty()) {
            if (explicit.size() != world) {
                throw new IllegalArgumentException(
                        "--devices lists " + explicit.size() + " devices for world size " + world);
            }
            for (int d : explicit) {
                if (d < 0 || d >= deviceCount) {
                    throw new IllegalArgumentException("device " + d + " does not exist (" + deviceCount + " visible)");
                }
            }
            return List.copyOf(explicit);
        }
        if (deviceCount < 1) {
            throw new IllegalArgumentException("no CUDA device is visible");
        }
        List<Integer> out = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            out.add(r % deviceCount);
        }
        return out;
    }

    public static String human(long bytes) {
        if (bytes >= (1L << 30) && bytes % (1L << 30) == 0) {
            return (bytes >> 30) + " GiB";
        }
        if (bytes >= (1L << 20) && bytes % (1L << 20) == 0) {
            return (bytes >> 20) + " MiB";
        }
        if (bytes >= 1024 && bytes % 1024 == 0) {
            return (bytes >> 10) + " KiB";
        }
        return bytes + " B";
    }
}
