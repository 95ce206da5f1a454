package io.tensorlane.runtime.text;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A model's own tokenizer: {@code tokenizer.json} run by Hugging Face tokenizers (Rust, through DJL's JNI binding),
 * plus the special-token facts of the optional {@code tokenizer_config.json}, {@code generation_config.json} and
 * {@code config.json} of the same folder.
 *
 * <p>Encoding neither truncates nor pads. Decoding is the raw {@code tokenizers} decode (no
 * {@code clean_up_tokenization_spaces}, as Python's {@code tokenizers.Tokenizer.decode}). Safe for concurrent use;
 * close it to free the native tokenizer.
 */
public final class ModelTokenizer implements AutoCloseable {
    private final Path modelDir;
    private final HuggingFaceTokenizer tokenizer;
    private final Map<String, Integer> vocab;
    private final int vocabSize;
    private final String chatTemplate;
    private final String bosToken;
    private final String eosToken;
    private final Boolean addBosToken;
    private final List<Integer> eosTokenIds;
    private final OptionalInt bosTokenId;

    private ModelTokenizer(
            Path modelDir,
            HuggingFaceTokenizer tokenizer,
            JsonNode tokenizerJson,
            JsonNode tokenizerConfig,
            JsonNode generationConfig,
            JsonNode config) {
        this.modelDir = modelDir;
        this.tokenizer = tokenizer;
        this.vocab = ModelFiles.vocabulary(tokenizerJson);
        this.vocabSize =
                vocab.values().stream().mapToInt(Integer::intValue).max().orElse(-1) + 1;
        JsonNode template = tokenizerConfig.path("chat_template");
        this.chatTemplate = template.isTextual() ? template.asText() : null;
        this.bosToken = ModelFiles.tokenText(tokenizerConfig.get("bos_token"));
        this.eosToken = ModelFiles.tokenText(tokenizerConfig.get("eos_token"));
        JsonNode addBos = tokenizerConfig.path("add_bos_token");
        this.addBosToken = addBos.isBoolean() ? addBos.asBoolean() : null;

        LinkedHashSet<Integer> eos = new LinkedHashSet<>(ModelFiles.ids(generationConfig.get("eos_token_id")));
        eos.addAll(ModelFiles.ids(config.get("eos_token_id")));
        tokenId(eosToken).ifPresent(eos::add);
        this.eosTokenIds = List.copyOf(eos);

        List<Integer> bos = new ArrayList<>(ModelFiles.ids(generationConfig.get("bos_token_id")));
        bos.addAll(ModelFiles.ids(config.get("bos_token_id")));
        tokenId(bosToken).ifPresent(bos::add);
        this.bosTokenId = bos.isEmpty() ? OptionalInt.empty() : OptionalInt.of(bos.get(0));
    }

    /**
     * Loads {@code tokenizer.json} (required) and the optional {@code tokenizer_config.json}, {@code generation_config.json}
     * and {@code config.json} of a model folder.
     *
     * @throws IllegalArgumentException when tokenizer.json is missing or a file is not valid JSON
     */
    public static ModelTokenizer load(Path modelDir) {
        Objects.requireNonNull(modelDir, "modelDir");
        Path file = modelDir.resolve("tokenizer.json");
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("no tokenizer.json in the model folder: " + file + " does not exist");
        }
        String json = ModelFiles.readString(file);
        JsonNode tokenizerJson;
        try {
            tokenizerJson = ModelFiles.JSON.readTree(json);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot parse " + file + ": " + e.getMessage(), e);
        }
        JsonNode tokenizerConfig = ModelFiles.optional(modelDir.resolve("tokenizer_config.json"));
        JsonNode generationConfig = ModelFiles.optional(modelDir.resolve("generation_config.json"));
        JsonNode config = ModelFiles.optional(modelDir.resolve("config.json"));
        DjlSetup.ensure();
        // No TokenizerConfig is handed to DJL: it would lower-case, add prefix spaces or clean up spaces on its own.
        Map<String, String> options = Map.of(
                "addSpecialTokens",
                "true",
                "truncation",
                "false",
                "padding",
                "false",
                "withOverflowingTokens",
                "false");
        HuggingFaceTokenizer hf;
        try {
            hf = HuggingFaceTokenizer.newInstance(
                    new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)), options);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot load " + file, e);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("tokenizers rejected " + file + ": " + e.getMessage(), e);
        }
        return new ModelTokenizer(modelDir, hf, tokenizerJson, tokenizerConfig, generationConfig, config);
    }

    /** Token ids of the text; with {@code addSpecialTokens} the post-processor's tokens (e.g. BOS) are added. */
    public int[] encode(String text, boolean addSpecialTokens) {
        Objects.requireNonNull(text, "text");
        long[] ids = tokenizer.encode(text, addSpecialTokens, false).getIds();
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = Math.toIntExact(ids[i]);
        }
        return out;
    }

    public String decode(int[] ids, boolean skipSpecialTokens) {
        return decode(ids, 0, ids.length, skipSpecialTokens);
    }

    /** Decodes {@code ids[from, to)}. */
    public String decode(int[] ids, int from, int to, boolean skipSpecialTokens) {
        Objects.checkFromToIndex(from, to, ids.length);
        long[] longs = new long[to - from];
        for (int i = from; i < to; i++) {
            longs[i - from] = ids[i];
        }
        return tokenizer.decode(longs, skipSpecialTokens);
    }

    /**
     * Ids that end generation: the union, in this order and without repeats, of generation_config.json's
     * {@code eos_token_id} (an int or a list), config.json's {@code eos_token_id} and the id of tokenizer_config.json's
     * {@code eos_token}. Empty when none of them is given.
     */
    public List<Integer> eosTokenIds() {
        return eosTokenIds;
    }

    /** generation_config.json's {@code bos_token_id}, else config.json's, else the id of tokenizer_config's bos_token. */
    public OptionalInt bosTokenId() {
        return bosTokenId;
    }

    /** tokenizer_config.json's {@code bos_token} text (for chat templates), or null. */
    public String bosToken() {
        return bosToken;
    }

    /** tokenizer_config.json's {@code eos_token} text (for chat templates), or null. */
    public String eosToken() {
        return eosToken;
    }

    /** tokenizer_config.json's {@code add_bos_token} when given. Whether encode adds BOS is tokenizer.json's business. */
    public Optional<Boolean> addBosToken() {
        return Optional.ofNullable(addBosToken);
    }

    /** tokenizer_config.json's {@code chat_template} when it is a string, else null. */
    public String chatTemplate() {
        return chatTemplate;
    }

    /**
     * Highest id of the model vocabulary and the added tokens, plus one: the row count an embedding needs at least.
     * (The model's own vocab_size may be larger, padded.)
     */
    public int vocabSize() {
        return vocabSize;
    }

    /** The id of a token string (as the vocabulary spells it, e.g. "Ġthe" or "<|eot_id|>"), if it has one. */
    public OptionalInt tokenId(String token) {
        Integer id = token == null ? null : vocab.get(token);
        return id == null ? OptionalInt.empty() : OptionalInt.of(id);
    }

    /** The whole vocabulary of tokenizer.json (model vocabulary and added tokens): token text to id, unmodifiable. */
    public Map<String, Integer> vocabulary() {
        return Collections.unmodifiableMap(vocab);
    }

    /** Streaming detokenizer of a sequence whose prompt is {@code promptIds}; special tokens are skipped in its text. */
    public IncrementalDecoder newDecoder(int[] promptIds) {
        return newDecoder(promptIds, true);
    }

    public IncrementalDecoder newDecoder(int[] promptIds, boolean skipSpecialTokens) {
        return new IncrementalDecoder((ids, from, to) -> decode(ids, from, to, skipSpecialTokens), promptIds);
    }

    public Path modelDir() {
        return modelDir;
    }

    @Override
    public void close() {
        tokenizer.close();
    }
}
