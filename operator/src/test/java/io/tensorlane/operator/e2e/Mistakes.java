package io.tensorlane.operator.e2e;

import io.tensorlane.operator.status.StatusAggregator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The acceptance list of issue 17: plausible mistakes a user makes in an InferenceDeployment, each a JSON merge patch
 * (RFC 7386) of the 2-GPU sample's spec, and where it must end: rejected by the schema with a message naming the
 * field, or with a condition whose message names the problem. Never Ready, never a silent Progressing.
 *
 * @param name what the user did
 * @param patch merge patch of {@code spec}
 * @param condition null: the schema rejects it at apply time; else the condition type that must become True
 * @param names a fragment the schema's or the condition's message must contain (the field, or the problem)
 */
record Mistakes(String name, String patch, String condition, String names) {
    static final String INVALID = StatusAggregator.INVALID_SPEC;
    static final String UNSCHEDULABLE = StatusAggregator.UNSCHEDULABLE;
    static final String DOES_NOT_FIT = StatusAggregator.DOES_NOT_FIT;

    @Override
    public String toString() {
        return name;
    }

    static Mistakes schema(String name, String patch, String field) {
        return new Mistakes(name, patch, null, field);
    }

    static Mistakes condition(String name, String patch, String condition, String names) {
        return new Mistakes(name, patch, condition, names);
    }

    static final List<Mistakes> ALL = List.of(
            // the schema says no at apply time
            schema("unknown engine", "{\"engine\":{\"type\":\"Foo\"}}", "spec.engine.type"),
            schema("fraction above 1", "{\"memory\":{\"fraction\":\"1.5\"}}", "spec.memory.fraction"),
            schema("fraction as a percentage", "{\"memory\":{\"fraction\":\"95%\"}}", "spec.memory.fraction"),
            schema("fraction as a number", "{\"memory\":{\"fraction\":0.9}}", "spec.memory.fraction"),
            schema("TP 0", "{\"parallelism\":{\"tensor\":0}}", "spec.parallelism.tensor"),
            schema("TP 16", "{\"parallelism\":{\"tensor\":16}}", "spec.parallelism.tensor"),
            schema("negative replicas", "{\"replicas\":-1}", "spec.replicas"),
            schema("unknown dtype", "{\"model\":{\"dtype\":\"int4\"}}", "spec.model.dtype"),
            schema(
                    "a KV-cache dtype no engine has",
                    "{\"serving\":{\"kvCacheDtype\":\"int8\"}}",
                    "spec.serving.kvCacheDtype"),
            schema("zero layers", "{\"model\":{\"geometry\":{\"layers\":0}}}", "spec.model.geometry.layers"),
            schema(
                    "KV heads as a word",
                    "{\"model\":{\"geometry\":{\"kvHeads\":\"eight\"}}}",
                    "spec.model.geometry.kvHeads"),
            schema(
                    "a model source of an unknown scheme",
                    "{\"model\":{\"source\":\"s3://bucket/llama\"}}",
                    "spec.model.source"),
            schema("model name with a space", "{\"model\":{\"name\":\"llama 3\"}}", "spec.model.name"),
            schema("port out of range", "{\"serving\":{\"port\":70000}}", "spec.serving.port"),
            schema(
                    "progress deadline of 5 s",
                    "{\"rollout\":{\"progressDeadlineSeconds\":5}}",
                    "spec.rollout.progressDeadlineSeconds"),
            schema(
                    "unknown interconnect",
                    "{\"placement\":{\"interconnect\":\"InfiniBand\"}}",
                    "spec.placement.interconnect"),
            schema(
                    "tiny allreduce buffer",
                    "{\"allreduce\":{\"maxMessageBytes\":100}}",
                    "spec.allreduce.maxMessageBytes"),
            schema("unknown allreduce mode", "{\"allreduce\":{\"mode\":\"Fast\"}}", "spec.allreduce.mode"),
            schema("negative reserve", "{\"memory\":{\"reserveMiB\":-1}}", "spec.memory.reserveMiB"),
            schema("batch of 8 tokens", "{\"serving\":{\"maxBatchTokens\":8}}", "spec.serving.maxBatchTokens"),
            schema(
                    "speculating 9 tokens",
                    "{\"serving\":{\"speculative\":{\"method\":\"ngram\",\"numSpeculativeTokens\":9}}}",
                    "spec.serving.speculative.numSpeculativeTokens"),
            schema(
                    "an n-gram of 0 tokens",
                    "{\"serving\":{\"speculative\":{\"method\":\"ngram\",\"promptLookupMax\":0}}}",
                    "spec.serving.speculative.promptLookupMax"),
            schema(
                    "a speculative method no engine has",
                    "{\"serving\":{\"speculative\":{\"method\":\"eagle\"}}}",
                    "spec.serving.speculative.method"),
            // the validator: geometry no engine can split or run
            condition(
                    "KV heads do not divide the heads",
                    "{\"model\":{\"geometry\":{\"kvHeads\":5}}}",
                    INVALID,
                    "spec.model.geometry.kvHeads 5 must divide spec.model.geometry.attentionHeads 32"),
            condition(
                    "more KV heads than heads",
                    "{\"model\":{\"geometry\":{\"kvHeads\":64}}}",
                    INVALID,
                    "spec.model.geometry.kvHeads 64 is more than"),
            condition(
                    "TP 3 for 32 heads",
                    "{\"parallelism\":{\"tensor\":3}}",
                    INVALID,
                    "spec.parallelism.tensor 3 must divide spec.model.geometry.attentionHeads 32"),
            condition(
                    "TP 4 with 6 KV heads",
                    "{\"parallelism\":{\"tensor\":4},\"model\":{\"geometry\":{\"attentionHeads\":24,"
                            + "\"kvHeads\":6}}}",
                    INVALID,
                    "spec.parallelism.tensor 4 and spec.model.geometry.kvHeads 6"),
            condition(
                    "hidden size not a multiple of the heads",
                    "{\"model\":{\"geometry\":{\"hiddenSize\":4100," + "\"headDim\":null}}}",
                    INVALID,
                    "spec.model.geometry.hiddenSize 4100 is not a multiple"),
            condition(
                    "odd head dimension",
                    "{\"model\":{\"geometry\":{\"headDim\":127}}}",
                    INVALID,
                    "spec.model.geometry.headDim 127 must be even"),
            condition(
                    "intermediate size not divisible by TP",
                    "{\"model\":{\"geometry\":{\"intermediateSize\":14337}}}",
                    INVALID,
                    "spec.model.geometry.intermediateSize 14337"),
            condition(
                    "draft-model speculation without naming the draft model",
                    "{\"serving\":{\"speculative\":{\"method\":\"draft\"}}}",
                    INVALID,
                    "spec.serving.speculative.draftModel is required when method is draft"),
            condition("SGLang without an image", "{\"engine\":{\"type\":\"SGLang\"}}", INVALID, "spec.engine.image"),
            condition(
                    "node selector key with a space",
                    "{\"placement\":{\"nodeSelector\":{\"gpu type\":\"a\"}}}",
                    INVALID,
                    "spec.placement.nodeSelector gpu type=a"),
            condition(
                    "node selector value with a space",
                    "{\"placement\":{\"nodeSelector\":{\"pool\":\"big gpus\"}}}",
                    INVALID,
                    "spec.placement.nodeSelector pool=big gpus"),
            // the API server's dry-run of the children
            condition(
                    "toleration Exists with a value",
                    "{\"placement\":{\"tolerations\":[{\"key\":\"gpu\",\"operator\":"
                            + "\"Exists\",\"value\":\"yes\"}]}}",
                    INVALID,
                    "spec.placement.tolerations"),
            condition(
                    "toleration with an unknown effect",
                    "{\"placement\":{\"tolerations\":[{\"key\":\"gpu\",\"operator\":"
                            + "\"Equal\",\"value\":\"x\",\"effect\":\"Sometimes\"}]}}",
                    INVALID,
                    "spec.placement.tolerations"),
            condition(
                    "toleration operator in lower case",
                    "{\"placement\":{\"tolerations\":[{\"key\":\"gpu\",\"operator\":" + "\"exists\"}]}}",
                    INVALID,
                    "spec.placement.tolerations"),
            condition(
                    "toleration key with a space",
                    "{\"placement\":{\"tolerations\":[{\"key\":\"bad key\",\"operator\":" + "\"Exists\"}]}}",
                    INVALID,
                    "spec.placement.tolerations"),
            condition(
                    "env name with '='",
                    "{\"engine\":{\"env\":[{\"name\":\"BAD=NAME\",\"value\":\"1\"}]}}",
                    INVALID,
                    "spec.engine.env"),
            condition(
                    "env var set twice",
                    "{\"engine\":{\"env\":[{\"name\":\"X\",\"value\":\"1\"},{\"name\":\"X\"," + "\"value\":\"2\"}]}}",
                    INVALID,
                    "spec.engine.env sets X more than once"),
            condition(
                    "env with value and valueFrom",
                    "{\"engine\":{\"env\":[{\"name\":\"X\",\"value\":\"1\",\"valueFrom\":"
                            + "{\"fieldRef\":{\"fieldPath\":\"metadata.name\"}}}]}}",
                    INVALID,
                    "spec.engine.env"),
            condition(
                    "image with a trailing space",
                    "{\"engine\":{\"image\":\"runtime:1 \"}}",
                    INVALID,
                    "spec.engine.image"),
            condition(
                    "image with upper-case letters",
                    "{\"engine\":{\"image\":\"Team/Runtime:1\"}}",
                    INVALID,
                    "spec.engine.image 'Team/Runtime:1' is not an image reference"),
            // the planner
            condition(
                    "fraction too small for the weights",
                    "{\"memory\":{\"fraction\":\"0.05\"}}",
                    DOES_NOT_FIT,
                    "memory.fraction 0.05"),
            condition(
                    "context longer than any GPU holds",
                    "{\"serving\":{\"maxModelLength\":50000000}}",
                    DOES_NOT_FIT,
                    "does not fit"),
            condition(
                    "a petabyte of weights",
                    "{\"model\":{\"weightBytes\":1000000000000000}}",
                    DOES_NOT_FIT,
                    "does not fit"),
            condition(
                    "NVLink where there is none",
                    "{\"placement\":{\"interconnect\":\"NVLink\"}}",
                    UNSCHEDULABLE,
                    "NVLink"),
            condition(
                    "a node label no node has",
                    "{\"placement\":{\"nodeSelector\":{\"pool\":\"nowhere\"}}}",
                    UNSCHEDULABLE,
                    "pool"));

    /** {@code patch} merged into {@code target} (RFC 7386: null removes, objects merge, anything else replaces). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> merge(Map<String, Object> target, Map<String, Object> patch) {
        Map<String, Object> out = new LinkedHashMap<>(target);
        patch.forEach((k, v) -> {
            if (v == null) {
                out.remove(k);
            } else if (v instanceof Map<?, ?> pm && out.get(k) instanceof Map<?, ?> tm) {
                out.put(k, merge((Map<String, Object>) tm, (Map<String, Object>) pm));
            } else {
                out.put(k, v);
            }
        });
        return out;
    }
}
