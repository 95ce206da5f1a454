package io.tensorlane.operator.render;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;

/**
 * The children of one InferenceDeployment, ready for server-side apply.
 *
 * @param revision stable hash of the rendered pod template (first 10 hex of its sha256), also on the pod template
 *     as label {@code tensorlane.io/revision}
 */
public record Rendered(Deployment deployment, Service service, String revision) {}
