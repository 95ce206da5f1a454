package io.tensorlane.runtime.sched;

/** The result of one step: the greedy token per logits row, and the rows' logits ({@code rows × vocab}) when asked. */
public record StepResult(int[] ids, float[] logits) {}
