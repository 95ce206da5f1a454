package io.tensorlane.runtime.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every fixture of scripts/oracle/chat_fixtures.py renders byte-for-byte as transformers renders it, with the same
 * tools and documents; a case where transformers' rendering raises must raise here with the same message.
 */
class ChatTemplateFixturesTest {
    static final List<String> TEMPLATES = List.of(
            "llama-3-instruct",
            "llama-3.1-instruct",
            "llama-3.2-instruct",
            "qwen2.5-instruct",
            "qwen3",
            "mistral-7b-instruct-v0.3");
    private static final ObjectMapper JSON = new ObjectMapper();

    static String resource(String path) throws IOException {
        try (InputStream in = ChatTemplateFixturesTest.class.getResourceAsStream("/chat/" + path)) {
            assertThat(in).as(path).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    static Stream<Arguments> fixtures() throws IOException {
        List<Arguments> out = new ArrayList<>();
        for (String name : TEMPLATES) {
            for (JsonNode f : JSON.readTree(resource("expected/" + name + ".json"))) {
                out.add(Arguments.of(name, f.get("case").asText(), f));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("fixtures")
    @SuppressWarnings("unchecked")
    void rendersLikeTransformers(String name, String caseName, JsonNode f) throws IOException {
        Clock clock = Clock.fixed(LocalDateTime.parse(f.get("now").asText()).toInstant(ZoneOffset.UTC), ZoneOffset.UTC);
        ChatTemplate t = ChatTemplate.compile(
                        resource("templates/" + name + ".jinja"),
                        f.get("bos_token").isNull() ? null : f.get("bos_token").asText(),
                        f.get("eos_token").isNull() ? null : f.get("eos_token").asText())
                .withClock(clock);
        List<Map<String, Object>> messages = JSON.convertValue(f.get("conversation"), List.class);
        Map<String, Object> kwargs = JSON.convertValue(f.get("kwargs"), Map.class);
        List<Map<String, Object>> tools = listOrNone(f.path("tools"));
        List<Map<String, Object>> documents = listOrNone(f.path("documents"));
        boolean agp = f.get("add_generation_prompt").asBoolean();
        JsonNode error = f.path("error");
        if (error.isTextual()) {
            assertThatThrownBy(() -> t.render(messages, tools, documents, agp, kwargs))
                    .as(f.get("rendered_by").asText())
                    .isInstanceOf(ChatTemplateException.class)
                    .hasMessage(error.asText());
            return;
        }
        assertThat(t.render(messages, tools, documents, agp, kwargs))
                .as(f.get("rendered_by").asText())
                .isEqualTo(f.get("expected").asText());
    }

    /** A fixture's list, or null (Python's None) where it is null or absent (fixtures without tool cases). */
    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> listOrNone(JsonNode n) {
        return n.isArray() ? JSON.convertValue(n, List.class) : null;
    }
}
