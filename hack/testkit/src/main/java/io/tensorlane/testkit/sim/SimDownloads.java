package io.tensorlane.testkit.sim;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.tensorlane.contract.FetchProgress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A simulated download step: the log lines the runtime's {@code fetch-model} prints (a human line and the contract's
 * {@link FetchProgress} line at every 10%, then the complete line), spread evenly over {@code duration}. Pure.
 *
 * @param duration how long the step runs
 * @param bytes    bytes every download reports; 0: each pod's model size ({@link #bytesFor})
 */
public record SimDownloads(Duration duration, long bytes) {
    public static final String INIT_CONTAINER = "fetch-model";
    /** A draft model's download step (spec.serving.speculative.draftModel), run after {@link #INIT_CONTAINER}. */
    public static final String DRAFT_INIT_CONTAINER = "fetch-draft-model";

    public static final int STEPS = 10;
    /** What a download of a model whose size is not known reports (Llama-3.1-8B's bf16 weights). */
    public static final long UNKNOWN_MODEL_BYTES = 16_060_522_496L;

    /** A line and when it appears, after the step started. */
    public record Line(long atMillis, String text) {}

    public SimDownloads {
        if (duration == null || duration.isNegative() || bytes < 0) {
            throw new IllegalArgumentException(
                    "a simulated download needs a duration >= 0 and bytes >= 0, got " + duration + " and " + bytes);
        }
    }

    /**
     * The bytes a download reports: the fixed figure when one was given, else {@code modelBytes} (the weight bytes of
     * the pod's InferenceDeployment, null when unknown), else {@link #UNKNOWN_MODEL_BYTES}.
     */
    public long bytesFor(Long modelBytes) {
        return bytes > 0 ? bytes : modelBytes != null && modelBytes > 0 ? modelBytes : UNKNOWN_MODEL_BYTES;
    }

    /**
     * The download steps' init containers of {@code pod} ({@link #INIT_CONTAINER}, {@link #DRAFT_INIT_CONTAINER}), in the
     * pod's order (the kubelet runs them one after the other); empty when it has none.
     */
    public static List<String> initContainers(Pod pod) {
        List<Container> inits = pod.getSpec() == null ? null : pod.getSpec().getInitContainers();
        return inits == null
                ? List.of()
                : inits.stream()
                        .map(Container::getName)
                        .filter(n -> INIT_CONTAINER.equals(n) || DRAFT_INIT_CONTAINER.equals(n))
                        .toList();
    }

    /** org/name@rev from step {@code init}'s {@code --source hf://org/name@rev}, or "unknown". */
    static String model(Pod pod, String init) {
        for (Container c : pod.getSpec().getInitContainers()) {
            List<String> a = c.getArgs() == null ? List.of() : c.getArgs();
            int i = a.indexOf("--source");
            if (init.equals(c.getName()) && i >= 0 && i + 1 < a.size()) {
                return a.get(i + 1).replaceFirst("^hf://", "");
            }
        }
        return "unknown";
    }

    /** Step {@code init}'s log lines for {@code pod}, reporting a model of {@code bytes} bytes. */
    public List<Line> lines(Pod pod, String init, long bytes) {
        String model = model(pod, init);
        List<Line> out = new ArrayList<>();
        long ms = duration.toMillis();
        out.add(new Line(0, "fetch-model: hf://" + model + " (simulated)"));
        for (int k = 0; k < STEPS; k++) {
            long done = bytes * k / STEPS;
            long at = ms * k / STEPS;
            out.add(new Line(
                    at,
                    String.format(
                            Locale.ROOT,
                            "fetch-model: model.safetensors | total %.2f/%.2f GB (%d%%)",
                            done / 1e9,
                            bytes / 1e9,
                            k * 100 / STEPS)));
            out.add(new Line(at, new FetchProgress(model, FetchProgress.RUNNING, done, bytes, 0, 1).toLine()));
        }
        out.add(new Line(ms, new FetchProgress(model, FetchProgress.COMPLETE, bytes, bytes, 1, 1).toLine()));
        out.add(new Line(ms, "fetch-model: complete: " + model + " (simulated)"));
        return out;
    }
}
