package io.tensorlane.testkit.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.tensorlane.contract.FetchProgress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The simulated download step: which size it reports, and the lines the operator reads. */
class SimDownloadsTest {
    static final Pod POD = new PodBuilder()
            .withNewMetadata()
            .withName("p")
            .endMetadata()
            .withNewSpec()
            .addNewInitContainer()
            .withName(SimDownloads.INIT_CONTAINER)
            .withArgs("fetch-model", "--source", "hf://org/m@abc", "--dest", "/models/x")
            .endInitContainer()
            .endSpec()
            .build();

    /** A pod with a draft model: the model's step, then the draft's (what the operator renders for hf:// drafts). */
    static final Pod WITH_DRAFT = new PodBuilder(POD)
            .editSpec()
            .addNewInitContainer()
            .withName(SimDownloads.DRAFT_INIT_CONTAINER)
            .withArgs("fetch-model", "--source", "hf://org/d@def", "--dest", "/draft-model/x")
            .endInitContainer()
            .addNewInitContainer()
            .withName("other")
            .endInitContainer()
            .endSpec()
            .build();

    @ParameterizedTest(name = "fixed {0}, model {1} -> {2}")
    @CsvSource(
            nullValues = "null",
            value = {
                "0, 410000000000, 410000000000", // the model's size when no figure is fixed
                "0, null, " + SimDownloads.UNKNOWN_MODEL_BYTES, // unknown model size
                "0, 0, " + SimDownloads.UNKNOWN_MODEL_BYTES,
                "16100000000, 410000000000, 16100000000" // a fixed figure wins (tests that assert on it)
            })
    void reportsTheModelsSizeUnlessAFigureIsFixed(long fixed, Long model, long expected) {
        assertThat(new SimDownloads(Duration.ofSeconds(10), fixed).bytesFor(model))
                .isEqualTo(expected);
    }

    @Test
    void linesEndWithTheCompleteProgressLineOfThatSize() {
        List<SimDownloads.Line> lines =
                new SimDownloads(Duration.ofSeconds(10), 0).lines(POD, SimDownloads.INIT_CONTAINER, 2_000_000_000L);
        String log =
                String.join("\n", lines.stream().map(SimDownloads.Line::text).toList());
        FetchProgress last = FetchProgress.last(log).orElseThrow();
        assertThat(last.model()).isEqualTo("org/m@abc");
        assertThat(last.state()).isEqualTo(FetchProgress.COMPLETE);
        assertThat(last.totalBytes()).isEqualTo(2_000_000_000L);
        assertThat(lines.get(lines.size() - 1).atMillis()).isEqualTo(10_000);
    }

    @Test
    void aDraftModelsStepRunsAfterTheModelsAndLogsTheDraft() {
        assertThat(SimDownloads.initContainers(POD)).containsExactly(SimDownloads.INIT_CONTAINER);
        assertThat(SimDownloads.initContainers(WITH_DRAFT))
                .containsExactly(SimDownloads.INIT_CONTAINER, SimDownloads.DRAFT_INIT_CONTAINER);
        assertThat(SimDownloads.initContainers(
                        new PodBuilder().withNewSpec().endSpec().build()))
                .isEmpty();
        List<SimDownloads.Line> lines = new SimDownloads(Duration.ofSeconds(4), 0)
                .lines(WITH_DRAFT, SimDownloads.DRAFT_INIT_CONTAINER, 500_000_000L);
        FetchProgress last = FetchProgress.last(String.join(
                        "\n", lines.stream().map(SimDownloads.Line::text).toList()))
                .orElseThrow();
        assertThat(last.model()).isEqualTo("org/d@def");
        assertThat(last.totalBytes()).isEqualTo(500_000_000L);
        assertThat(SimDownloads.model(WITH_DRAFT, "other")).isEqualTo("unknown");
    }
}
