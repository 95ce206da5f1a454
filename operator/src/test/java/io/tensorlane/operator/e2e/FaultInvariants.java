package io.tensorlane.operator.e2e;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import io.tensorlane.operator.render.ChildNames;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;

/**
 * What must hold whatever fault hits the operator or the API server (issue 17, item 5), watched while the faults
 * happen and checked at the end:
 *
 * <ul>
 *   <li>the spec is the user's: the test writes every spec through {@link #create}/{@link #edit} and records the
 *       generation and spec JSON the API server returned; every version the watch shows, and the final object, must
 *       carry a generation the test wrote with exactly that spec (the operator writing the spec would bump the
 *       generation or change the JSON);
 *   <li>{@code status.lastStableSpec}, once set, is never seen unset again;
 *   <li>(per deployment, {@link #expect}) the end state: a phase, the rollback history's actions in order with
 *       attempts 1..n (a rollback applied twice shows as an extra entry), the Deployment's template revision count
 *       (kube's {@code deployment.kubernetes.io/revision}: a template applied again after its rollback counts up)
 *       and at most one event per rollback/remediation.
 * </ul>
 */
final class FaultInvariants implements AutoCloseable {
    static final String KUBE_REVISION = "deployment.kubernetes.io/revision";

    private final KubernetesClient client;
    private final String namespace;
    /** name -> generation -> spec JSON, as the API server returned the test's writes. */
    private final Map<String, Map<Long, String>> written = new ConcurrentHashMap<>();
    /** name -> generation -> spec JSON, as the watch showed them. */
    private final Map<String, Map<Long, String>> observed = new ConcurrentHashMap<>();

    private final Set<String> hadStable = ConcurrentHashMap.newKeySet();
    /** name -> rollback generation -> the longest history the watch showed. */
    private final Map<String, Map<Long, Integer>> histories = new ConcurrentHashMap<>();

    private final List<String> violations = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, Expected> expected = new ConcurrentHashMap<>();
    private final SharedIndexInformer<InferenceDeployment> informer;

    /** What one deployment must end as. */
    /**
     * @param history           the rollback history's actions at the end, and the most any generation may hold
     * @param templateRevisions kube's revision count of the Deployment at the end
     * @param rollbacks         Rollback decisions over all generations (the most Rollback events)
     * @param remediations      remediation steps over all generations (the most Remediated events)
     */
    record Expected(
            String description,
            Predicate<InferenceDeployment> converged,
            List<String> history,
            int templateRevisions,
            int rollbacks,
            int remediations) {}

    FaultInvariants(KubernetesClient client, String namespace) {
        this.client = client;
        this.namespace = namespace;
        informer = client.resources(InferenceDeployment.class)
                .inNamespace(namespace)
                .inform(new ResourceEventHandler<>() {
                    @Override
                    public void onAdd(InferenceDeployment d) {
                        seen(d);
                    }

                    @Override
                    public void onUpdate(InferenceDeployment old, InferenceDeployment d) {
                        seen(d);
                    }

                    @Override
                    public void onDelete(InferenceDeployment d, boolean unknownFinalState) {}
                });
    }

    InferenceDeployment create(InferenceDeployment d) {
        return record(client.resource(d).create());
    }

    InferenceDeployment edit(String name, UnaryOperator<InferenceDeployment> f) {
        return record(client.resources(InferenceDeployment.class)
                .inNamespace(namespace)
                .withName(name)
                .edit(f));
    }

    KubernetesClient client() {
        return client;
    }

    void expect(String name, Expected e) {
        expected.put(name, e);
    }

    Expected expected(String name) {
        return expected.get(name);
    }

    /** Deletes {@code name}, after which it is no longer checked (call {@link #check} first). */
    void delete(String name) {
        expected.remove(name);
        written.remove(name);
        client.resources(InferenceDeployment.class)
                .inNamespace(namespace)
                .withName(name)
                .delete();
    }

    /** The end state and spec checks of one (converged) deployment, now. */
    List<String> check(String name) {
        List<String> problems = new ArrayList<>(endState(name, expected.get(name)));
        problems.addAll(specs(name, written.get(name)));
        return problems;
    }

    private InferenceDeployment record(InferenceDeployment d) {
        written.computeIfAbsent(d.getMetadata().getName(), k -> new ConcurrentHashMap<>())
                .put(d.getMetadata().getGeneration(), Serialization.asJson(d.getSpec()));
        return d;
    }

    private void seen(InferenceDeployment d) {
        String name = d.getMetadata().getName();
        String spec = Serialization.asJson(d.getSpec());
        String before = observed.computeIfAbsent(name, k -> new ConcurrentHashMap<>())
                .putIfAbsent(d.getMetadata().getGeneration(), spec);
        if (before != null && !before.equals(spec)) {
            violations.add(name + ": the spec changed without a new generation ("
                    + d.getMetadata().getGeneration() + ", resourceVersion "
                    + d.getMetadata().getResourceVersion() + ")");
        }
        RollbackStatus rb = d.getStatus() == null ? null : d.getStatus().rollback;
        if (rb != null && rb.generation != null) {
            histories
                    .computeIfAbsent(name, k -> new ConcurrentHashMap<>())
                    .merge(rb.generation, rb.history.size(), Math::max);
        }
        boolean stable = d.getStatus() != null && d.getStatus().lastStableSpec != null;
        if (stable) {
            hadStable.add(name);
        } else if (hadStable.contains(name)) {
            violations.add(name + ": status.lastStableSpec lost at resourceVersion "
                    + d.getMetadata().getResourceVersion());
        }
    }

    /** Waits (bounded) until every expected deployment converged; then every invariant; empty when all hold. */
    List<String> awaitConvergedAndCheck(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Map<String, String> notConverged = notConverged();
        while (!notConverged.isEmpty() && System.nanoTime() < deadline) {
            OperatorProcess.sleep(500);
            notConverged = notConverged();
        }
        List<String> problems = new ArrayList<>();
        notConverged.forEach((name, state) -> problems.add(name + " did not converge in " + timeout + " ("
                + expected.get(name).description() + "): " + state));
        if (notConverged.isEmpty()) {
            OperatorProcess.sleep(2_000); // late writes of a duplicate rollback would land now
        }
        expected.forEach((name, e) -> problems.addAll(endState(name, e)));
        written.forEach((name, gens) -> problems.addAll(specs(name, gens)));
        problems.addAll(violations);
        return problems;
    }

    private Map<String, String> notConverged() {
        Map<String, String> out = new TreeMap<>();
        expected.forEach((name, e) -> {
            try {
                InferenceDeployment d = get(name);
                if (d == null || !e.converged().test(d)) {
                    out.put(name, d == null ? "(gone)" : Serialization.asJson(d.getStatus()));
                }
            } catch (RuntimeException apiDown) {
                out.put(name, "(not readable: " + apiDown.getMessage() + ")");
            }
        });
        return out;
    }

    private List<String> endState(String name, Expected e) {
        List<String> problems = new ArrayList<>();
        InferenceDeployment d = get(name);
        RollbackStatus rb = d.getStatus().rollback;
        List<String> actions = rb == null
                ? List.of()
                : rb.history.stream().map(a -> String.valueOf(a.action)).toList();
        if (!actions.equals(e.history())) {
            problems.add(name + ": rollback history " + actions + ", expected " + e.history());
        }
        List<Integer> attempts =
                rb == null ? List.of() : rb.history.stream().map(a -> a.attempt).toList();
        if (!attempts.equals(IntStream.rangeClosed(1, attempts.size()).boxed().toList())) {
            problems.add(name + ": attempt numbers " + attempts + " are not 1.." + attempts.size());
        }
        Deployment dep = client.apps()
                .deployments()
                .inNamespace(namespace)
                .withName(ChildNames.of(name))
                .get();
        String rev = dep == null ? null : dep.getMetadata().getAnnotations().get(KUBE_REVISION);
        if (!String.valueOf(e.templateRevisions()).equals(rev)) {
            problems.add(name + ": Deployment template revision " + rev + ", expected " + e.templateRevisions()
                    + " (a template applied more often than the story needs)");
        }
        histories.getOrDefault(name, Map.of()).forEach((gen, size) -> {
            if (size > e.history().size()) {
                problems.add(name + ": generation " + gen + " had " + size
                        + " rollback steps at one point, expected at most "
                        + e.history().size());
            }
        });
        Map<String, Integer> allowed =
                Map.of("Rollback", e.rollbacks(), "Remediated", e.remediations(), "RollbackFailed", 1);
        allowed.forEach((reason, max) -> {
            long n = events(name, reason);
            if (n > max) {
                problems.add(name + ": " + n + " " + reason + " events, expected at most " + max);
            }
        });
        return problems;
    }

    private List<String> specs(String name, Map<Long, String> gens) {
        List<String> problems = new ArrayList<>();
        observed.getOrDefault(name, Map.of()).forEach((gen, spec) -> {
            if (!spec.equals(gens.get(gen))) {
                problems.add(name + ": generation " + gen + " seen with a spec the test did not write: " + spec);
            }
        });
        InferenceDeployment d = get(name);
        long last = gens.keySet().stream().mapToLong(Long::longValue).max().orElseThrow();
        if (d.getMetadata().getGeneration() != last
                || !Serialization.asJson(d.getSpec()).equals(gens.get(last))) {
            problems.add(name + ": the spec is no longer the one the test wrote (generation "
                    + d.getMetadata().getGeneration() + ", written " + last + ")");
        }
        return problems;
    }

    long events(String name, String reason) {
        return client.v1().events().inNamespace(namespace).list().getItems().stream()
                .filter(ev -> name.equals(ev.getInvolvedObject().getName()) && reason.equals(ev.getReason()))
                .mapToLong(ev -> ev.getCount() == null ? 1 : ev.getCount())
                .sum();
    }

    InferenceDeployment get(String name) {
        return client.resources(InferenceDeployment.class)
                .inNamespace(namespace)
                .withName(name)
                .get();
    }

    /** Settled in {@code phase} for the current generation, Ready (but for Failed), with its applied revision stable. */
    static Predicate<InferenceDeployment> settled(Phase phase) {
        return d -> {
            var s = d.getStatus();
            if (s == null
                    || s.phase != phase
                    || !d.getMetadata().getGeneration().equals(s.observedGeneration)) {
                return false;
            }
            if (phase == Phase.Failed) {
                return true;
            }
            return Conditions.isTrue(s.conditions, StatusAggregator.READY)
                    && s.lastStableSpec != null
                    && s.lastAppliedSpec != null
                    && s.lastStableSpec.revision.equals(s.lastAppliedSpec.revision);
        };
    }

    @Override
    public void close() {
        informer.close();
    }
}
