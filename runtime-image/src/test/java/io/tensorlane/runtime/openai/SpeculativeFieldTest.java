package io.tensorlane.runtime.openai;

import static io.tensorlane.runtime.openai.RequestParserTest.chat;
import static io.tensorlane.runtime.openai.RequestParserTest.cmpl;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** {@code "speculative": false}: a request's opt-out of the server's speculative decoding (Tensorlane's extension). */
class SpeculativeFieldTest {
    @Test
    void onUnlessTheRequestSaysFalse() {
        assertThat(cmpl("{\"prompt\": \"x\"}").params().speculative()).isTrue();
        assertThat(cmpl("{\"prompt\": \"x\", \"speculative\": true}").params().speculative())
                .isTrue();
        assertThat(cmpl("{\"prompt\": \"x\", \"speculative\": false}").params().speculative())
                .isFalse();
        assertThat(chat("{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"speculative\": false}")
                        .params()
                        .speculative())
                .isFalse();
    }

    @Test
    void aValueThatIsNotABooleanIsA400NamingTheField() {
        assertThatThrownBy(() -> cmpl("{\"prompt\": \"x\", \"speculative\": \"no\"}"))
                .isInstanceOf(OpenAiException.class)
                .hasMessageContaining("speculative");
    }
}
