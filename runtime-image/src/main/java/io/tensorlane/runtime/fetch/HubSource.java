package io.tensorlane.runtime.fetch;

import java.util.regex.Pattern;

/**
 * A model on a Hugging Face Hub: {@code hf://[ORG/]NAME[@REVISION]} (revision: a branch, tag or commit; default main).
 *
 * @param id       [ORG/]NAME
 * @param revision what was asked for (the commit it resolves to is pinned separately)
 */
public record HubSource(String id, String revision) {
    public static final String SCHEME = "hf://";
    public static final String DEFAULT_REVISION = "main";
    private static final Pattern PART = Pattern.compile("[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?");
    private static final Pattern REVISION = Pattern.compile("[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)*");
    private static final Pattern COMMIT = Pattern.compile("[0-9a-f]{40}");
    /** The Hub's longest repository id. */
    static final int MAX_ID = 96;

    /** Parses {@code hf://[ORG/]NAME[@REVISION]}; a bad URI ends with a message saying what is wrong. */
    public static HubSource parse(String uri) throws FetchFailure {
        if (uri == null || !uri.startsWith(SCHEME)) {
            throw usage(uri, "expected hf://ORG/NAME[@REVISION]");
        }
        String rest = uri.substring(SCHEME.length());
        String rev = DEFAULT_REVISION;
        int at = rest.indexOf('@');
        if (at >= 0) {
            rev = rest.substring(at + 1);
            rest = rest.substring(0, at);
            if (!REVISION.matcher(rev).matches() || rev.contains("..")) {
                throw usage(uri, "the revision '" + rev + "' is not a branch, tag or commit name");
            }
        }
        // [ORG/]NAME as spec.model.source allows (io.tensorlane.modelfacts.ModelSource): the Hub has ids without an org
        String[] parts = rest.split("/", -1);
        if (parts.length > 2) {
            throw usage(uri, "expected [ORG/]NAME before the optional @REVISION, got '" + rest + "'");
        }
        for (String p : parts) {
            if (!PART.matcher(p).matches() || p.contains("..") || p.contains("--")) {
                throw usage(
                        uri, "'" + p + "' is not a valid organization or model name (letters, digits, '-', '_', '.')");
            }
        }
        if (rest.length() > MAX_ID) {
            throw usage(uri, "the model id is longer than " + MAX_ID + " characters");
        }
        return new HubSource(rest, rev);
    }

    private static FetchFailure usage(String uri, String why) {
        return new FetchFailure(FetchFailure.Kind.USAGE, "bad model source '" + uri + "': " + why);
    }

    /** True when the revision is a full commit id (nothing to resolve). */
    public boolean pinned() {
        return COMMIT.matcher(revision).matches();
    }

    @Override
    public String toString() {
        return SCHEME + id + "@" + revision;
    }
}
