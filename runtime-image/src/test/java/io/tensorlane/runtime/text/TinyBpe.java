package io.tensorlane.runtime.text;

import java.net.URISyntaxException;
import java.nio.file.Path;

/** The hand-made byte-level BPE fixture under src/test/resources/tokenizers/tiny-bpe (see make_fixture.py there). */
final class TinyBpe {
    static final int BOS = 274;
    static final int END_OF_TEXT = 275;
    static final int EOT = 276;
    /** Merged tokens: see MERGES in make_fixture.py; ids 0..255 are the bytes themselves. */
    static final int THE = 258;

    static final int HELLO = 264;
    static final int SPACE_HELLO = 265;
    static final int TWO_SPACES = 266;
    static final int EURO_HEAD = 268;
    static final int SPACE_WORLD = 273;

    private TinyBpe() {}

    static Path dir() {
        try {
            return Path.of(TinyBpe.class
                            .getResource("/tokenizers/tiny-bpe/tokenizer.json")
                            .toURI())
                    .getParent();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
