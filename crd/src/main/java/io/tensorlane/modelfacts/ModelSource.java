package io.tensorlane.modelfacts;

import java.util.Locale;

/**
 * A parsed {@code spec.model.source}: where the weights come from. {@link #PATTERN} is the schema's check at apply time
 * (the CRD carries it); {@link #parse} is the one parser the operator and the runtime share.
 *
 * <ul>
 *   <li>{@code hf://org/name[@revision]}: a Hugging Face Hub repository (revision: branch, tag or commit; default main)
 *   <li>{@code pvc://claim[/path]}: a directory on an existing PersistentVolumeClaim, mounted read-only
 *   <li>{@code file:///host/path}: a node-local directory (a hostPath, read-only)
 *   <li>{@code oci://registry/repo:tag} or {@code @sha256:<digest>}: an OCI artifact, mounted as an image volume
 * </ul>
 *
 * @param scheme which kind of source
 * @param location hf: the repository id (org/name); pvc: the claim name; file: the absolute host path; oci: the image
 *     reference (registry/repo:tag or @digest)
 * @param path pvc: the directory inside the claim ("" for its root); otherwise ""
 * @param revision hf: the requested revision (main when not given); otherwise null
 */
public record ModelSource(Scheme scheme, String location, String path, String revision) {
    /** Hub repository id: an optional org and a name, as the Hub spells them. */
    private static final String HF_ID = "([A-Za-z0-9][A-Za-z0-9._-]{0,95}/)?[A-Za-z0-9][A-Za-z0-9._-]{0,95}";

    private static final String HF = "hf://" + HF_ID + "(@[A-Za-z0-9][A-Za-z0-9._/-]{0,127})?";
    private static final String PVC = "pvc://[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?(/[A-Za-z0-9._@+=,/-]*)?";
    private static final String FILE = "file:///[A-Za-z0-9._@+=,/-]*";
    private static final String OCI =
            "oci://[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]([a-z0-9._-]*[a-z0-9])?)+"
                    + "(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}|@sha256:[a-f0-9]{64})";
    /** The schema pattern of spec.model.source (RE2 and java.util.regex read it the same). */
    public static final String PATTERN = "^(" + HF + "|" + PVC + "|" + FILE + "|" + OCI + ")$";

    private static final java.util.regex.Pattern COMPILED = java.util.regex.Pattern.compile(PATTERN);
    /** The revision of an hf:// source without {@code @revision}. */
    public static final String DEFAULT_REVISION = "main";

    /** The four kinds of source. */
    public enum Scheme {
        HF("hf"),
        PVC("pvc"),
        FILE("file"),
        OCI("oci");

        private final String prefix;

        Scheme(String prefix) {
            this.prefix = prefix;
        }

        public String prefix() {
            return prefix + "://";
        }
    }

    /**
     * The source of a model spec: {@code source} when set, else {@code hf://<name>}.
     *
     * @throws ModelFactsException naming the source and what is wrong with it
     */
    public static ModelSource of(String source, String modelName) {
        String s = source == null || source.isBlank() ? "hf://" + modelName : source.trim();
        return parse(s);
    }

    /** Parses a source URI; a ModelFactsException says what is wrong. */
    public static ModelSource parse(String uri) {
        if (uri == null || uri.isBlank()) {
            throw new ModelFactsException("model source is empty");
        }
        int sep = uri.indexOf("://");
        String scheme = sep < 0 ? "" : uri.substring(0, sep).toLowerCase(Locale.ROOT);
        if (!COMPILED.matcher(uri).matches()) {
            boolean known =
                    scheme.equals("hf") || scheme.equals("pvc") || scheme.equals("file") || scheme.equals("oci");
            throw new ModelFactsException("model source " + uri
                    + (known
                            ? " is not a valid " + scheme + ":// URI (" + expected(scheme) + ")"
                            : " has an unknown scheme (expected hf://, pvc://, file:// or oci://)"));
        }
        String rest = uri.substring(sep + 3);
        switch (scheme) {
            case "hf" -> {
                int at = rest.indexOf('@');
                return new ModelSource(
                        Scheme.HF,
                        at < 0 ? rest : rest.substring(0, at),
                        "",
                        at < 0 ? DEFAULT_REVISION : rest.substring(at + 1));
            }
            case "pvc" -> {
                int slash = rest.indexOf('/');
                String claim = slash < 0 ? rest : rest.substring(0, slash);
                String path = slash < 0 ? "" : trimSlashes(rest.substring(slash + 1));
                noDotDot(uri, path);
                return new ModelSource(Scheme.PVC, claim, path, null);
            }
            case "file" -> {
                String path = rest.length() > 1 && rest.endsWith("/") ? rest.substring(0, rest.length() - 1) : rest;
                noDotDot(uri, path);
                return new ModelSource(Scheme.FILE, path, "", null);
            }
            default -> {
                return new ModelSource(Scheme.OCI, rest, "", null);
            }
        }
    }

    private static String expected(String scheme) {
        return switch (scheme) {
            case "hf" -> "hf://org/name or hf://org/name@revision";
            case "pvc" -> "pvc://claim/path with a lower-case claim name";
            case "file" -> "file:///absolute/host/path";
            default -> "oci://registry/repository:tag or oci://registry/repository@sha256:<digest>";
        };
    }

    private static void noDotDot(String uri, String path) {
        for (String part : path.split("/")) {
            if (part.equals("..")) {
                throw new ModelFactsException("model source " + uri + " must not contain '..'");
            }
        }
    }

    private static String trimSlashes(String p) {
        String s = p;
        while (s.startsWith("/")) {
            s = s.substring(1);
        }
        while (s.endsWith("/")) {
            s = s.substring(0, s.length() - 1);
        }
        return s;
    }

    /** The URI again, normalized: hf:// always with its revision. */
    public String uri() {
        return switch (scheme) {
            case HF -> "hf://" + location + "@" + revision;
            case PVC -> "pvc://" + location + (path.isEmpty() ? "" : "/" + path);
            case FILE -> "file://" + location;
            case OCI -> "oci://" + location;
        };
    }

    /** The same hf:// source pinned to a commit. */
    public ModelSource pinned(String sha) {
        if (scheme != Scheme.HF) {
            throw new IllegalStateException("only hf:// sources have revisions");
        }
        return new ModelSource(scheme, location, path, sha);
    }
}
