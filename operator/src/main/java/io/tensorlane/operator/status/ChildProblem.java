package io.tensorlane.operator.status;

/**
 * Why a child (Deployment, Service, Job) was not applied: a condition reason ({@code DeploymentRejected},
 * {@code ServiceApplyFailed}, …) and a message naming the object and the field.
 */
public record ChildProblem(String reason, String message) {}
