package io.tensorlane.testkit.sim;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.contract.MemoryBudget;
import java.util.Optional;
import java.util.function.Supplier;

/** Reads what an outOfMemory rule needs from the API server: the pod's InferenceDeployment and its node's GPU memory. */
final class SimOwners {
    private SimOwners() {}

    /** The start-up OOM of one pod, computed on first use (only outOfMemory rules ask). */
    static final class LazyOom implements Supplier<Optional<MemoryBudget.Oom>> {
        private final KubernetesClient client;
        private final Pod pod;
        private final Long gpuMemoryBytes;
        private Optional<MemoryBudget.Oom> value;

        LazyOom(KubernetesClient client, Pod pod, Long gpuMemoryBytes) {
            this.client = client;
            this.pod = pod;
            this.gpuMemoryBytes = gpuMemoryBytes;
        }

        @Override
        public synchronized Optional<MemoryBudget.Oom> get() {
            if (value == null) {
                Long gpu = gpuMemoryBytes != null
                        ? gpuMemoryBytes
                        : gpuMemoryOf(client, pod.getSpec().getNodeName());
                value = gpu == null ? Optional.empty() : SimMemory.startupOom(pod, gpu, ownerSpec(client, pod));
            }
            return value;
        }
    }

    /** A CudaOom action of an outOfMemory rule without numbers gets the failing allocation's. */
    static SimAction withNumbers(SimRule rule, Supplier<Optional<MemoryBudget.Oom>> oom) {
        SimAction a = rule.action();
        if (!Boolean.TRUE.equals(rule.outOfMemory())
                || a.type() != SimAction.Type.CudaOom
                || a.requestedBytes() != null) {
            return a;
        }
        return oom.get()
                .map(o -> new SimAction(
                        a.type(),
                        a.container(),
                        o.phase(),
                        o.requestedBytes(),
                        o.freeBytes(),
                        a.restarts(),
                        a.message()))
                .orElse(a);
    }

    /**
     * pod → ReplicaSet → Deployment → InferenceDeployment (owner references); null when the chain breaks. A spec without
     * geometry or dtype gets the ones the operator read from the model (status.model), as the operator's own plan does.
     */
    static InferenceDeploymentSpec ownerSpec(KubernetesClient client, Pod pod) {
        return owner(client, pod).map(SimOwners::withModelGeometry).orElse(null);
    }

    /** pod → ReplicaSet → Deployment → InferenceDeployment (owner references); empty when the chain breaks. */
    static Optional<InferenceDeployment> owner(KubernetesClient client, Pod pod) {
        String ns = pod.getMetadata().getNamespace();
        var rs = owner(pod, "ReplicaSet")
                .map(n ->
                        client.apps().replicaSets().inNamespace(ns).withName(n).get());
        var dep = rs.flatMap(r -> owner(r, "Deployment"))
                .map(n ->
                        client.apps().deployments().inNamespace(ns).withName(n).get());
        return dep.flatMap(d -> owner(d, "InferenceDeployment"))
                .map(n -> client.resources(InferenceDeployment.class)
                        .inNamespace(ns)
                        .withName(n)
                        .get());
    }

    /**
     * The weight bytes of the pod's InferenceDeployment: spec.model.weightBytes, else what the operator read from the
     * model (status.model.weightBytes); with {@code draft} the draft model's (spec.serving.speculative.draftModel,
     * status.draftModel); null when the chain breaks or neither is known.
     */
    static Long weightBytes(KubernetesClient client, Pod pod, boolean draft) {
        try {
            return owner(client, pod)
                    .map(SimOwners::withModelGeometry)
                    .map(s -> draft
                            ? s.serving == null
                                            || s.serving.speculative == null
                                            || s.serving.speculative.draftModel == null
                                    ? null
                                    : s.serving.speculative.draftModel.weightBytes
                            : s.model == null ? null : s.model.weightBytes)
                    .orElse(null);
        } catch (KubernetesClientException e) {
            return null; // the simulated step then reports SimDownloads.UNKNOWN_MODEL_BYTES
        }
    }

    /**
     * The spec with what the operator read filled in where the user left it out, as the operator's plan does: the
     * model's geometry, dtype and weight bytes from status.model, a draft model's from status.draftModel.
     */
    static InferenceDeploymentSpec withModelGeometry(InferenceDeployment d) {
        InferenceDeploymentSpec spec = d.getSpec();
        if (spec == null || spec.model == null || d.getStatus() == null) {
            return spec;
        }
        ModelSpec draft =
                spec.serving == null || spec.serving.speculative == null ? null : spec.serving.speculative.draftModel;
        boolean model = d.getStatus().model != null && !complete(spec.model);
        boolean drafts = draft != null && d.getStatus().draftModel != null && !complete(draft);
        if (!model && !drafts) {
            return spec;
        }
        InferenceDeploymentSpec copy = Serialization.clone(spec);
        if (model) {
            fill(copy.model, d.getStatus().model);
        }
        if (drafts) {
            fill(copy.serving.speculative.draftModel, d.getStatus().draftModel);
        }
        return copy;
    }

    private static boolean complete(ModelSpec m) {
        return m.geometry != null && m.dtype != null && m.weightBytes != null;
    }

    private static void fill(ModelSpec m, ModelStatus read) {
        if (m.geometry == null) {
            m.geometry = read.geometry;
        }
        if (m.dtype == null) { // as the operator's plan: the dtype read from the model
            m.dtype = io.tensorlane.modelfacts.ModelDtype.of(read).orElse(null);
        }
        if (m.weightBytes == null) {
            m.weightBytes = read.weightBytes;
        }
    }

    private static Long gpuMemoryOf(KubernetesClient client, String node) {
        GpuTopology t = node == null
                ? null
                : client.resources(GpuTopology.class).withName(node).get();
        return t == null || t.getStatus() == null || t.getStatus().summary == null
                ? null
                : t.getStatus().summary.gpuMemoryBytes;
    }

    private static Optional<String> owner(HasMetadata o, String kind) {
        return o == null
                ? Optional.empty()
                : o.getMetadata().getOwnerReferences().stream()
                        .filter(r -> kind.equals(r.getKind()))
                        .map(OwnerReference::getName)
                        .findFirst();
    }
}
