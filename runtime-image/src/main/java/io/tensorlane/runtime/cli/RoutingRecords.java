package io.tensorlane.runtime.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The experts of every step of a MoE model as the engine dumps them ({@code TENSORLANE_MOE_ROUTING_DUMP}, {@code
 * llm.RoutingDump}: per step little-endian int32 {@code n, layers, k}, per token {@code row, position, token id}, then
 * the ids {@code [layers][n][k]}), and how many (token, MoE layer) pairs two steps routed to different experts.
 * prefixcheck gates a MoE model's layers after its first MoE layer only where the cached and the fresh computation
 * routed every token alike (a router near-tie tipped the other way by rounding is a discrete change).
 */
final class RoutingRecords {
    /** One step: its tokens' rows and positions and their experts {@code ids[(layer * n + token) * k + slot]}. */
    record Step(int n, int layers, int k, int[] rows, int[] positions, int[] ids) {
        /** The sorted experts of the token of {@code row} at {@code position} in MoE layer {@code layer}, or null. */
        int[] experts(int row, int position, int layer) {
            for (int t = 0; t < n; t++) {
                if (rows[t] == row && positions[t] == position) {
                    int[] e = Arrays.copyOfRange(ids, (layer * n + t) * k, (layer * n + t + 1) * k);
                    Arrays.sort(e);
                    return e;
                }
            }
            return null;
        }
    }

    private RoutingRecords() {}

    /** Every step of the dump in {@code file}; a malformed file ends in an IllegalArgumentException naming it. */
    static List<Step> read(Path file) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        List<Step> out = new ArrayList<>();
        while (b.hasRemaining()) {
            if (b.remaining() < 12) {
                throw new IllegalArgumentException(file + ": " + b.remaining() + " bytes after step " + out.size());
            }
            int n = b.getInt();
            int layers = b.getInt();
            int k = b.getInt();
            long need = 4L * (3L * n + (long) layers * n * k);
            if (n < 0 || layers < 0 || k < 0 || need > b.remaining()) {
                throw new IllegalArgumentException(
                        file + ": step " + out.size() + " (n " + n + ", layers " + layers + ", k " + k + ") is cut");
            }
            int[] rows = new int[n];
            int[] pos = new int[n];
            for (int t = 0; t < n; t++) {
                rows[t] = b.getInt();
                pos[t] = b.getInt();
                b.getInt(); // token id
            }
            int[] ids = new int[layers * n * k];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = b.getInt();
            }
            out.add(new Step(n, layers, k, rows, pos, ids));
        }
        return out;
    }

    /** Where one computation of positions [from, to) of a sequence ran: a step and the sequence's row in it. */
    record At(Step step, int row) {}

    /**
     * The (token, MoE layer) pairs of positions [from, to) that {@code a} and {@code b} routed to different experts; a
     * position either lacks (not in that step) counts as different. Each position is looked up in the first of {@code a}'s
     * steps that has it (a sequence prefilled in chunks).
     */
    static int differing(List<At> a, List<At> b, int from, int to) {
        int diff = 0;
        for (int p = from; p < to; p++) {
            Map<Integer, int[]> x = experts(a, p);
            Map<Integer, int[]> y = experts(b, p);
            int layers = Math.max(layersOf(a), layersOf(b));
            for (int l = 0; l < layers; l++) {
                int[] ex = x.get(l);
                int[] ey = y.get(l);
                if (ex == null || ey == null || !Arrays.equals(ex, ey)) {
                    diff++;
                }
            }
        }
        return diff;
    }

    private static int layersOf(List<At> at) {
        return at.stream().mapToInt(s -> s.step().layers()).max().orElse(0);
    }

    private static Map<Integer, int[]> experts(List<At> at, int position) {
        Map<Integer, int[]> out = new HashMap<>();
        for (At s : at) {
            for (int l = 0; l < s.step().layers(); l++) {
                int[] e = s.step().experts(s.row(), position, l);
                if (e != null && !out.containsKey(l)) {
                    out.put(l, e);
                }
            }
        }
        return out;
    }
}
