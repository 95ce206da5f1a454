package io.tensorlane.operator.reconcile;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.tensorlane.operator.plan.NodeInfo;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What the reconciler saw for one InferenceDeployment, read from the informer caches.
 *
 * @param nodes every node with its free GPUs (this deployment's own pods not counted) and its GpuTopology
 * @param deployment the owned Deployment, or null
 * @param service the owned Service, or null
 * @param pods the pods selected by the owned Deployment (every revision)
 */
public record Observation(List<NodeInfo> nodes, Deployment deployment, Service service, List<Pod> pods) {

    /** Nodes this deployment's pods are bound to now (the planner keeps their class while the spec fits there). */
    public Set<String> currentNodes() {
        return pods.stream()
                .map(p -> p.getSpec() == null ? null : p.getSpec().getNodeName())
                .filter(Objects::nonNull)
                .collect(Collectors.toSet());
    }
}
