package io.tensorlane.topology;

import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * Recorded GPU topologies of real node types, as {@code nvidia-smi topo -m} and NVML report them, kept as YAML under
 * {@code io/tensorlane/topology/fixtures/<name>.yaml} on the classpath. Test data: it lives in crd's tests and reaches
 * the testkit's node simulator and the other modules' tests as crd's test-jar. Each fixture holds only observed facts (gpus, links, source, driver); the summary is
 * always computed by {@link TopologyClassifier} when loaded.
 */
public final class TopologyFixtures {
    /** 8x H200 SXM, NV18 between every pair. */
    public static final String H200_SXM_8 = "h200-sxm-8";
    /** 8x RTX PRO 6000 Blackwell over PCIe Gen5, two NUMA islands of four, full P2P. */
    public static final String RTX_PRO_6000_PCIE_8 = "rtx-pro-6000-pcie-8";
    /** 4x GeForce RTX 4090, no P2P. */
    public static final String RTX_4090_4 = "rtx-4090-4";
    /** 2x L40S on one host bridge (PHB), P2P. */
    public static final String L40S_2 = "l40s-2";
    /** 4x A100 80GB PCIe behind one PCIe switch (PIX). */
    public static final String A100_PCIE_4 = "a100-pcie-4";
    /** 4x H100 NVL: NVLink bridges on pairs 0-1 and 2-3, SYS across without P2P. */
    public static final String MIXED_4 = "mixed-4";
    /** The one-H200 machine of the device tool, as the runtime's probe recorded it there (2026-11-29). */
    public static final String H200_1 = "h200-1";

    /** Every fixture, for table-driven tests. */
    public static final List<String> ALL =
            List.of(H200_SXM_8, RTX_PRO_6000_PCIE_8, RTX_4090_4, L40S_2, A100_PCIE_4, MIXED_4, H200_1);

    private static final String ROOT = "/io/tensorlane/topology/fixtures/";

    private TopologyFixtures() {}

    /** Loads a fixture by name and computes its summary; a fresh object on every call. */
    public static GpuTopologyStatus load(String name) {
        String path = ROOT + name + ".yaml";
        try (InputStream in = TopologyFixtures.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalArgumentException(
                        "no topology fixture '" + name + "' (classpath " + path + "); known: " + ALL);
            }
            GpuTopologyStatus status = Serialization.unmarshal(in, GpuTopologyStatus.class);
            return TopologyClassifier.withSummary(status);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read topology fixture " + path, e);
        }
    }
}
