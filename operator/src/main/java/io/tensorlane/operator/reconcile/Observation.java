package io.tensorlane.operator.reconcile;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.tensorlane.operator.plan.NodeInfo;
import java.util.List;

/**
 * What the reconciler saw for one InferenceDeployment, read from the informer caches.
 *
 * @param nodes every node with its free GPUs (this deployment's own pods not counted) and its GpuTopology
 * @param deployment the owned Deployment, or null
 * @param service the owned Service, or null
 * @param pods the pods selected by the owned Deployment (every revision)
 */
public record Observation(List<NodeInfo> nodes, Deployment deployment, Service service, List<Pod> pods) {
}
