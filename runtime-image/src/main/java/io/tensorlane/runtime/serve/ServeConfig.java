package io.tensorlane.runtime.serve;

import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.EngineEnv;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The plan {@code serve} runs: read from the environment the operator renders ({@link EngineEnv}), with command-line
 * overrides. Every bad value ends in an {@link IllegalArgumentException} naming the variable and what is expected.
 *
 * @param worldSize tensor-parallel ranks (GPUs of the pod, or virtual ranks on one GPU)
 * @param allreduce Custom (our P2P kernels up to {@code maxMessageBytes}, NCCL above), NCCL, or None (world size 1)
 * @param table message size → algorithm for Custom (null otherwise)
 * @param maxMessageBytes largest custom-allreduce message; sizes the IPC buffers (0 unless Custom)
 * @param memoryFraction static pool (weights + KV cache) as a fraction of each GPU's total memory, in (0, 1)
 * @param port HTTP port of /health/ready, /health/live and /metrics
 */
public record ServeConfig(
        int worldSize,
        Allreduce allreduce,
        AlgorithmTable table,
        long maxMessageBytes,
        double memoryFraction,
        int port) {

    public static final int DEFAULT_PORT = 8080;

    public ServeConfig {
        if (worldSize < 1 || worldSize > BufferLayout.MAX_RANKS) {
            throw new IllegalArgumentException(
                    EngineEnv.WORLD_SIZE + " must be 1.." + BufferLayout.MAX_RANKS + ", got " + worldSize);
        }
        if (allreduce == null) {
            throw new IllegalArgumentException(EngineEnv.ALLREDUCE + " is required (Custom, NCCL or None)");
        }
        if (allreduce == Allreduce.None && worldSize != 1) {
            throw new IllegalArgumentException(
                    EngineEnv.ALLREDUCE + "=None is only valid with world size 1, got " + worldSize);
        }
        if (allreduce != Allreduce.None && worldSize == 1) {
            allreduce = Allreduce.None; // one rank: nothing to reduce
        }
        if (allreduce == Allreduce.Custom) {
            if (maxMessageBytes < BufferLayout.VECTOR_BYTES || maxMessageBytes > BufferLayout.MAX_MESSAGE_BYTES) {
                throw new IllegalArgumentException(EngineEnv.MAX_MESSAGE_BYTES + " must be " + BufferLayout.VECTOR_BYTES
                        + ".." + BufferLayout.MAX_MESSAGE_BYTES + " bytes with " + EngineEnv.ALLREDUCE + "=Custom, got "
                        + maxMessageBytes);
            }
            if (table == null) {
                table = AlgorithmTable.defaults(
                        worldSize, BufferLayout.of(worldSize, maxMessageBytes).maxMessageBytes());
            }
            if (table.worldSize() != worldSize) {
                throw new IllegalArgumentException(EngineEnv.ALGORITHM_TABLE + " is for world size " + table.worldSize()
                        + " but " + EngineEnv.WORLD_SIZE + " is " + worldSize);
            }
            long layoutMax = BufferLayout.of(worldSize, maxMessageBytes).maxMessageBytes();
            if (table.maxMessageBytes() > layoutMax) {
                throw new IllegalArgumentException(
                        EngineEnv.ALGORITHM_TABLE + " covers messages up to " + table.maxMessageBytes() + " bytes but "
                                + EngineEnv.MAX_MESSAGE_BYTES + " is " + maxMessageBytes);
            }
        } else {
            table = null;
            maxMessageBytes = 0;
        }
        if (!(memoryFraction > 0 && memoryFraction < 1)) {
            throw new IllegalArgumentException(
                    EngineEnv.MEMORY_FRACTION + " must be a number in (0, 1), got " + memoryFraction);
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(EngineEnv.PORT + " must be 1..65535, got " + port);
        }
    }

    /** Command-line values that replace the environment's (null: not given). */
    public record Overrides(
            Integer worldSize, String allreduce, Long maxMessageBytes, Double memoryFraction, Integer port) {
        public static final Overrides NONE = new Overrides(null, null, null, null, null);
    }

    /**
     * Reads the plan from {@code env} with {@code o} on top. Without any world size the plan is one rank; without an
     * allreduce mode it is Custom for more than one rank (the default max message size is 8 MiB). The memory fraction
     * has no default: the operator always sets it, and a forgotten value should not silently take a GPU.
     */
    public static ServeConfig from(Map<String, String> env, Overrides o) {
        List<String> problems = new ArrayList<>();
        int world = o.worldSize() != null ? o.worldSize() : intOf(env, EngineEnv.WORLD_SIZE, 1, problems);
        String modeText = o.allreduce() != null ? o.allreduce() : env.get(EngineEnv.ALLREDUCE);
        Allreduce mode = null;
        if (modeText == null || modeText.isBlank()) {
            mode = world > 1 ? Allreduce.Custom : Allreduce.None;
        } else {
            mode = Allreduce.find(modeText).orElse(null);
            if (mode == null) {
                problems.add(EngineEnv.ALLREDUCE + " must be Custom, NCCL or None, got '" + modeText + "'");
            }
        }
        long maxBytes = o.maxMessageBytes() != null
                ? o.maxMessageBytes()
                : longOf(env, EngineEnv.MAX_MESSAGE_BYTES, 8L << 20, problems);
        AlgorithmTable table = null;
        String tableJson = env.get(EngineEnv.ALGORITHM_TABLE);
        if (tableJson != null && !tableJson.isBlank() && mode == Allreduce.Custom && o.worldSize() == null) {
            try {
                table = AlgorithmTable.fromJson(tableJson);
            } catch (IllegalArgumentException e) {
                problems.add(EngineEnv.ALGORITHM_TABLE + ": " + e.getMessage());
            }
        }
        Double fraction = o.memoryFraction();
        if (fraction == null) {
            String f = env.get(EngineEnv.MEMORY_FRACTION);
            if (f == null || f.isBlank()) {
                problems.add(EngineEnv.MEMORY_FRACTION
                        + " is not set (the operator sets it; pass --memory-fraction to run by hand)");
            } else {
                fraction = doubleOf(EngineEnv.MEMORY_FRACTION, f, problems);
            }
        }
        int port = o.port() != null ? o.port() : intOf(env, EngineEnv.PORT, DEFAULT_PORT, problems);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", problems));
        }
        return new ServeConfig(world, mode, table, maxBytes, fraction, port);
    }

    /** The buffer layout of one rank (Custom only). */
    public BufferLayout layout() {
        return allreduce == Allreduce.Custom ? BufferLayout.of(worldSize, maxMessageBytes) : null;
    }

    private static int intOf(Map<String, String> env, String name, int dflt, List<String> problems) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            problems.add(name + " must be an integer, got '" + v + "'");
            return dflt;
        }
    }

    private static long longOf(Map<String, String> env, String name, long dflt, List<String> problems) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            problems.add(name + " must be an integer number of bytes, got '" + v + "'");
            return dflt;
        }
    }

    private static Double doubleOf(String name, String v, List<String> problems) {
        try {
            return Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            problems.add(name + " must be a number in (0, 1), got '" + v + "'");
            return null;
        }
    }
}
