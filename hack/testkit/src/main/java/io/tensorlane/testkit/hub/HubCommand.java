package io.tensorlane.testkit.hub;

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tensorlane-testkit hub}: a loopback Hugging Face Hub serving the sample models (header-only) for the demo. */
@Command(
        name = "hub",
        mixinStandardHelpOptions = true,
        description =
                "Serve the models of manifests/samples (config.json and safetensors headers, no weights) on loopback, "
                        + "the way the Hub's file API does; point the operator at it with TENSORLANE_MODEL_HUB_ENDPOINT.")
public final class HubCommand implements Callable<Integer> {
    @Option(names = "--port", description = "loopback port (default: ${DEFAULT-VALUE}; 0 picks a free one)")
    int port = 18080;

    @Override
    public Integer call() throws Exception {
        try (LocalHub hub = SampleModels.serve(new LocalHub(port))) {
            System.err.println(
                    "[local-hub] running; serving " + SampleModels.all().keySet() + " at " + SampleModels.SHA);
            System.out.println(hub.endpoint());
            System.out.flush();
            new CountDownLatch(1).await();
        }
        return 0;
    }
}
