package io.tensorlane.operator.render;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.operator.engine.EngineProfile;
import io.tensorlane.operator.engine.EngineProfiles;
import io.tensorlane.operator.plan.Plan;
import java.util.ArrayList;
import java.util.List;

/**
 * The engine container's command line, environment and health paths: the NCCL environment of the plan, then what the
 * engine's {@link EngineProfile} renders, then the user's additions.
 */
final class EngineCommands {
    /** Container command (null: the image's entrypoint), args, env, readiness and liveness paths. */
    record Engine(List<String> command, List<String> args, List<EnvVar> env, String readyPath, String livePath) {}

    private EngineCommands() {}

    static Engine render(InferenceDeploymentSpec spec, Plan plan, ModelVolumes.Mount model) {
        return render(spec, plan, model, null);
    }

    /**
     * @param model where the model is in the pod (its directory) and the source URI the pod uses
     * @param draft where the draft model is in the pod, or null without one
     */
    static Engine render(InferenceDeploymentSpec spec, Plan plan, ModelVolumes.Mount model, ModelVolumes.Mount draft) {
        EngineProfile profile = EngineProfiles.of(spec.engine.type);
        EngineProfile.Launch launch = profile.launch(
                spec,
                plan,
                new EngineProfile.ModelLocation(
                        model.modelDir(), model.source(), draft == null ? null : draft.modelDir()));
        List<EnvVar> env = new ArrayList<>();
        plan.allreduce().ncclEnv().forEach(e -> env.add(EngineProfile.env(e.name(), e.value())));
        env.addAll(launch.env());
        List<String> args = new ArrayList<>(launch.args());
        // the user's additions come last: their args after ours; their env replaces ours of the same name (a list with
        // duplicate names is rejected by server-side apply, whose merge key is the name)
        args.addAll(spec.engine.args);
        spec.engine.env.forEach(e -> {
            env.removeIf(ours -> ours.getName().equals(e.getName()));
            env.add(new EnvVarBuilder(e).build());
        });
        return new Engine(launch.command(), args, env, profile.readyPath(), profile.livePath());
    }
}
