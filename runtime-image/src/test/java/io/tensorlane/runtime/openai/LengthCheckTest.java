package io.tensorlane.runtime.openai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The context-length check after tokenization, in vLLM's current wording. */
class LengthCheckTest {
    static final ModelInfo M = new ModelInfo("tiny", 4096, 1000, 0L);

    @Test
    void promptAndMaxTokensOverTheContext() {
        OpenAiException e =
                catchThrowableOfType(OpenAiException.class, () -> RequestValidator.checkLength(M, 1297, 4000, true));
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.type()).isEqualTo("invalid_request_error");
        assertThat(e.param()).isEqualTo("input_tokens");
        assertThat(e.code()).isEqualTo("context_length_exceeded");
        assertThat(e.getMessage())
                .isEqualTo("This model's maximum context length is 4096 tokens. However, you requested "
                        + "4000 output tokens and your prompt contains 1297 input tokens, for a total of 5297 tokens "
                        + "(1297 + 4000 = 5297 > 4096). Please reduce the length of the input prompt or the number of requested "
                        + "output tokens.");
    }

    @Test
    void promptAloneFillsTheContext() {
        OpenAiException e =
                catchThrowableOfType(OpenAiException.class, () -> RequestValidator.checkLength(M, 4096, null, false));
        assertThat(e.getMessage())
                .isEqualTo("This model's maximum context length is 4096 tokens. However, your request "
                        + "has 4096 input tokens. Please reduce the length of the input messages.");
    }

    @Test
    void boundaries() {
        assertThatCode(() -> RequestValidator.checkLength(M, 4095, null, true)).doesNotThrowAnyException();
        assertThatCode(() -> RequestValidator.checkLength(M, 4095, 1, false)).doesNotThrowAnyException();
        assertThatCode(() -> RequestValidator.checkLength(M, 96, 4000, false)).doesNotThrowAnyException();
        assertThat(catchThrowableOfType(OpenAiException.class, () -> RequestValidator.checkLength(M, 97, 4000, false)))
                .isNotNull();
        assertThat(catchThrowableOfType(
                                OpenAiException.class,
                                () -> RequestValidator.checkLength(M, 10, Integer.MAX_VALUE, false))
                        .getMessage())
                .contains("for a total of 2147483657 tokens");
    }

    @Test
    void effectiveMaxTokens() {
        assertThat(RequestValidator.effectiveMaxTokens(M, 100, 50)).isEqualTo(50);
        assertThat(RequestValidator.effectiveMaxTokens(M, 100, null)).isEqualTo(3996);
        assertThat(RequestValidator.effectiveMaxTokens(M, 4095, null)).isEqualTo(1);
    }

    @Test
    void modelAndTokenIds() {
        assertThat(RequestValidator.checkModel(M, null)).isEqualTo("tiny");
        assertThat(RequestValidator.checkModel(M, "tiny")).isEqualTo("tiny");
        assertThat(catchThrowableOfType(OpenAiException.class, () -> RequestValidator.checkModel(M, "x"))
                        .getMessage())
                .isEqualTo("The model `x` does not exist.");
        assertThatCode(() -> RequestValidator.checkTokenIds(M, List.of(0, 999), "prompt"))
                .doesNotThrowAnyException();
        assertThat(catchThrowableOfType(
                                OpenAiException.class,
                                () -> RequestValidator.checkTokenIds(M, List.of(3, 1000), "prompt"))
                        .getMessage())
                .startsWith("Token id 1000 is out of vocabulary");
    }
}
