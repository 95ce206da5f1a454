package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.GpuLink.LinkType;

/**
 * The {@code NCCL_P2P_LEVEL} value for a GPU path type as {@code nvidia-smi topo -m} names it ({@link LinkType}).
 * NCCL parses only its own path names ({@code topoPathTypeStr} up to {@code PATH_SYS}: LOC, NVL, NVB, C2C, PIX, PXB,
 * P2C, PXN, PHB, SYS) or an old-style number, and ignores anything else without a word, so nvidia-smi's {@code NODE}
 * (across PCIe host bridges within one NUMA node) must be translated: NCCL has one CPU node per NUMA node and calls a
 * PCIe path through it {@code PHB}; only the link between two CPU nodes makes a path {@code SYS}. Sources (NCCL
 * 2.28.9-1): {@code operator/src/test/resources/engine-flags/nccl.json}.
 */
public final class NcclP2pLevel {
    private NcclP2pLevel() {}

    /** The NCCL level that admits P2P over a path of this type and no further. */
    public static String of(LinkType type) {
        return switch (type) {
            case NV -> "NVL";
            case PIX -> "PIX";
            case PXB -> "PXB";
            case PHB, NODE -> "PHB";
            case SYS -> "SYS";
        };
    }
}
