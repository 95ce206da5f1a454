package io.tensorlane.runtime.openai;

/**
 * The served model as the protocol layer needs it.
 *
 * @param id the name clients send as {@code model} and {@code /v1/models} lists
 * @param maxModelLen context length: prompt plus completion tokens
 * @param vocabSize token ids of a prompt must be in [0, vocabSize)
 * @param created epoch seconds shown by {@code /v1/models}
 */
public record ModelInfo(String id, int maxModelLen, int vocabSize, long created) {
    public ModelInfo {
        if (id == null || id.isEmpty()) {
            throw new IllegalArgumentException("model id is empty");
        }
        if (maxModelLen < 1 || vocabSize < 1) {
            throw new IllegalArgumentException("maxModelLen and vocabSize must be positive");
        }
    }
}
