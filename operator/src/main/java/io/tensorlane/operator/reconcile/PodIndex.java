package io.tensorlane.operator.reconcile;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Indexes of the pod cache, so that a reconcile visits the pods it needs instead of every pod of the cluster: the
 * pods of a namespace (a deployment's own pods are among them), and the bound, not finished pods that take GPUs, by
 * node (what the placement counts as used). A pod's index keys are computed once per pod event, not per reconcile.
 */
final class PodIndex {
    static final String NAMESPACE = "tensorlane-namespace";
    static final String GPU_NODE = "tensorlane-gpu-node";

    private PodIndex() {}

    static Map<String, Function<Pod, List<String>>> indexers() {
        return Map.of(NAMESPACE, PodIndex::namespace, GPU_NODE, PodIndex::gpuNode);
    }

    static List<String> namespace(Pod p) {
        String ns = p.getMetadata() == null ? null : p.getMetadata().getNamespace();
        return ns == null ? List.of() : List.of(ns);
    }

    /** The node of a pod that holds GPUs there: bound, not Succeeded or Failed, with a GPU limit or request. */
    static List<String> gpuNode(Pod p) {
        String node = p.getSpec() == null ? null : p.getSpec().getNodeName();
        return node != null && !ClusterObserver.terminated(p) && ClusterObserver.gpuRequest(p) > 0
                ? List.of(node)
                : List.of();
    }
}
