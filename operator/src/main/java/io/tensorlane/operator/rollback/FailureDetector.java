package io.tensorlane.operator.rollback;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Finds failures on the pods of one revision; pure over the observed objects. */
public final class FailureDetector {
  private FailureDetector() {
  }

  /**
   * The most significant failure on pods labelled {@code tensorlane.io/revision=revision}: CUDA OOM, then host
   * OOMKilled, then CrashLoopBackOff; then the Deployment's ProgressDeadlineExceeded.
   *
   * @param deployment the owned Deployment, or null
   * @param now used as the time when a pod does not say when it failed
   */
  public static Optional<FailureSignal> detect(List<Pod> pods, String revision, Deployment deployment, Instant now) {
    throw new UnsupportedOperationException("in progress");
  }

  /** Since when all {@code expectedReplicas} pods of the revision have been Ready; empty when not all are. */
  public static Optional<Instant> allReadySince(List<Pod> pods, String revision, int expectedReplicas) {
    throw new UnsupportedOperationException("in progress");
  }
}
