package io.tensorlane.topology;

import io.tensorlane.api.v1alpha1.GpuInfo;
import io.tensorlane.api.v1alpha1.GpuLink;
import io.tensorlane.api.v1alpha1.GpuLink.LinkType;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Derives a low-confidence {@link GpuTopologyStatus} ({@code source: heuristic}) for a GPU node that has no probe result,
 * from the labels of NVIDIA GPU Feature Discovery: {@code nvidia.com/gpu.product} (the product name with '-' for spaces,
 * e.g. {@code NVIDIA-H100-80GB-HBM3}), {@code nvidia.com/gpu.count} and {@code nvidia.com/gpu.memory} (MiB). Pure.
 *
 * <p>The product name is matched against {@link #RULES}, first match wins. Each rule says how the GPUs are joined
 * (all pairs NVLink, NVLink bridges on pairs 0-1, 2-3, ..., or PCIe at an unknown level) and whether P2P over PCIe is
 * expected. The table is deliberately conservative: a PCIe product gets P2P only when it is a data-centre or
 * professional board whose driver enables PCIe P2P; everything else, consumer GeForce/TITAN cards, MIG instances and
 * unknown names get no P2P. Even a "P2P" entry may be wrong on a given platform (IOMMU/ACS, virtual machines): only a
 * probe result is trusted for forcing the custom allreduce. PCIe path levels are unknown, so the links carry no type
 * and the summary has no islands.
 */
public final class GfdHeuristic {
    public static final String PRODUCT = "nvidia.com/gpu.product";
    public static final String COUNT = "nvidia.com/gpu.count";
    public static final String MEMORY = "nvidia.com/gpu.memory";

    /** How a product's GPUs are joined, per the table. */
    public enum Fabric {
        /** NVLink/NVSwitch between every pair (SXM/HGX boards). */
        NVLINK_ALL,
        /** NVLink bridges join GPU pairs (0-1, 2-3, ...); other pairs go over PCIe (NVL boards). */
        NVLINK_BRIDGED_PAIRS,
        /** PCIe only. */
        PCIE
    }

    /** One row of the table: a product-name pattern (case-insensitive, searched in the label), fabric, PCIe P2P. */
    public record Rule(String id, Pattern pattern, Fabric fabric, boolean pcieP2p, String why) {
        static Rule of(String id, String regex, Fabric fabric, boolean pcieP2p, String why) {
            return new Rule(id, Pattern.compile(regex, Pattern.CASE_INSENSITIVE), fabric, pcieP2p, why);
        }
    }

    /** The table, first match wins; README's heuristic table is this list. */
    public static final List<Rule> RULES = List.of(
            Rule.of("mig", "-MIG-", Fabric.PCIE, false, "MIG instances do not do P2P"),
            Rule.of(
                    "consumer",
                    "GEFORCE|TITAN",
                    Fabric.PCIE,
                    false,
                    "consumer GeForce/TITAN: the driver disables PCIe P2P (RTX 40 series and later), never assumed"),
            Rule.of(
                    "nvl-bridge",
                    "-NVL($|-)",
                    Fabric.NVLINK_BRIDGED_PAIRS,
                    false,
                    "H100 NVL / H200 NVL: NVLink bridges on pairs; P2P across pairs not assumed"),
            Rule.of(
                    "sxm",
                    "SXM|HBM3|-H200($|-)|-H20($|-)|-H800($|-)|-B200|-B300|-B100|GB200|GB300|GH200",
                    Fabric.NVLINK_ALL,
                    false,
                    "SXM / HGX / Grace boards: NVLink (NVSwitch) between every GPU"),
            Rule.of(
                    "pcie-p2p",
                    "A100.*PCIE|H100.*PCIE|A800.*PCIE|H800.*PCIE|-L40S($|-)|-L40($|-)|-A40($|-)"
                            + "|RTX-6000-ADA|RTX-PRO-6000|RTX-A6000",
                    Fabric.PCIE,
                    true,
                    "data-centre / professional PCIe board whose driver enables PCIe P2P (platform permitting)"),
            Rule.of(
                    "pcie",
                    ".",
                    Fabric.PCIE,
                    false,
                    "other or unknown PCIe product (e.g. L4, A10, A16, T4, RTX A-series below A6000): P2P not assumed"));

    /** The outcome: a status when derivable, else null with the reason; {@code rule} names the table row used. */
    public record Result(GpuTopologyStatus status, String rule, String reason) {
        public boolean derived() {
            return status != null;
        }
    }

    private GfdHeuristic() {}

    /** Derives the topology from a node's labels; never throws on bad labels (the reason says what is wrong). */
    public static Result derive(Map<String, String> labels) {
        String product = labels == null ? null : labels.get(PRODUCT);
        String countText = labels == null ? null : labels.get(COUNT);
        if (product == null || product.isBlank() || countText == null) {
            return new Result(null, null, "no GPU Feature Discovery labels (" + PRODUCT + ", " + COUNT + ")");
        }
        Integer count = parse(countText);
        if (count == null || count < 1) {
            return new Result(null, null, COUNT + "='" + countText + "' is not a positive integer");
        }
        String memoryText = labels.get(MEMORY);
        Integer mib = memoryText == null ? null : parse(memoryText);
        if (memoryText != null && (mib == null || mib < 1)) {
            return new Result(null, null, MEMORY + "='" + memoryText + "' is not a positive number of MiB");
        }
        String name = product.strip().replaceFirst("(?i)-SHARED$", "");
        Rule rule = ruleFor(name);
        GpuTopologyStatus s = new GpuTopologyStatus();
        s.source = GpuTopologyStatus.Source.heuristic;
        for (int i = 0; i < count; i++) {
            GpuInfo g = new GpuInfo();
            g.index = i;
            g.product = name;
            g.memoryBytes = mib == null ? null : mib * 1024L * 1024L;
            s.gpus.add(g);
        }
        for (int a = 0; a < count; a++) {
            for (int b = a + 1; b < count; b++) {
                s.links.add(link(rule, a, b));
            }
        }
        return new Result(TopologyClassifier.withSummary(s), rule.id(), rule.why());
    }

    /** The first rule whose pattern occurs in the product label. */
    public static Rule ruleFor(String product) {
        return RULES.stream()
                .filter(r -> r.pattern().matcher(product).find())
                .findFirst()
                .orElseThrow();
    }

    private static GpuLink link(Rule rule, int a, int b) {
        boolean nv =
                rule.fabric() == Fabric.NVLINK_ALL || (rule.fabric() == Fabric.NVLINK_BRIDGED_PAIRS && a / 2 == b / 2);
        GpuLink l = new GpuLink();
        l.a = a;
        l.b = b;
        l.type = nv ? LinkType.NV : null;
        l.p2pRead = nv || rule.pcieP2p();
        l.p2pWrite = l.p2pRead;
        return l;
    }

    private static Integer parse(String text) {
        try {
            return Integer.valueOf(text.strip());
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
