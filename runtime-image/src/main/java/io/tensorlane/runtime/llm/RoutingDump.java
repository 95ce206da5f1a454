package io.tensorlane.runtime.llm;

import io.tensorlane.runtime.sched.StepBatch;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The experts each token of each step was routed to, appended to a file for checking the routing against transformers'
 * ({@code oracle/moe_routing.py}); on only when {@value #ENV} names the file (a diagnostic: it synchronizes each step
 * and costs a copy). One record per step, little-endian int32: {@code n, layers, k}, then per token {@code row,
 * position, token id}, then the ids {@code [layers][n][k]} (the MoE layers in order, slots in descending router weight).
 */
final class RoutingDump implements AutoCloseable {
    static final String ENV = "TENSORLANE_MOE_ROUTING_DUMP";

    private final DataOutputStream out;

    private RoutingDump(OutputStream out) {
        this.out = new DataOutputStream(new BufferedOutputStream(out, 1 << 20));
    }

    /** The dump {@value #ENV} asks for, or null. */
    static RoutingDump fromEnv(java.util.Map<String, String> env) {
        String file = env.get(ENV);
        if (file == null || file.isBlank()) {
            return null;
        }
        try {
            return new RoutingDump(Files.newOutputStream(Path.of(file)));
        } catch (IOException e) {
            throw new UncheckedIOException(ENV + "=" + file + ": cannot write it", e);
        }
    }

    void write(StepBatch b, int layers, int k, int[] ids) {
        int n = b.tokens();
        ByteBuffer buf = ByteBuffer.allocate(4 * (3 + 3 * n + ids.length)).order(ByteOrder.LITTLE_ENDIAN);
        buf.putInt(n).putInt(layers).putInt(k);
        for (int i = 0; i < n; i++) {
            buf.putInt(b.tokenRow()[i]).putInt(b.positions()[i]).putInt(b.tokenIds()[i]);
        }
        for (int id : ids) {
            buf.putInt(id);
        }
        try {
            out.write(buf.array());
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + ENV, e);
        }
    }

    @Override
    public void close() {
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException("closing " + ENV, e);
        }
    }
}
