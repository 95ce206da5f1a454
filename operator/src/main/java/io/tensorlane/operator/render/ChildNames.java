package io.tensorlane.operator.render;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * The name of an InferenceDeployment's Deployment and Service and the value of its instance label. An
 * InferenceDeployment may be named anything a DNS-1123 subdomain allows (253 characters, dots, a leading digit), but a
 * Service needs a DNS-1035 label (at most 63 characters of a-z, 0-9 and '-', starting with a letter) and a label value
 * at most 63 characters. A name that already is a DNS-1035 label is used as it is; any other gets a readable prefix
 * and the first 8 hex digits of its sha256, so two different names never share children. Pure.
 */
public final class ChildNames {
    /** Longest DNS-1035 label (and label value). */
    public static final int MAX = 63;

    private static final Pattern DNS_1035 = Pattern.compile("[a-z]([-a-z0-9]*[a-z0-9])?");
    private static final int HASH_HEX = 8;

    private ChildNames() {}

    /** True when {@code s} is a DNS-1035 label: what a Service name must be. */
    public static boolean isDns1035Label(String s) {
        return s != null && s.length() <= MAX && DNS_1035.matcher(s).matches();
    }

    /** The children's name for InferenceDeployment {@code name}: {@code name} itself when it is a DNS-1035 label. */
    public static String of(String name) {
        if (isDns1035Label(name)) {
            return name;
        }
        String readable = name.toLowerCase(java.util.Locale.ROOT)
                .replaceAll("[^a-z0-9-]+", "-")
                .replaceAll("-{2,}", "-")
                .replaceAll("^[^a-z]+", "");
        int room = MAX - HASH_HEX - 1;
        readable = readable.length() > room ? readable.substring(0, room) : readable;
        readable = readable.replaceAll("-+$", "");
        return (readable.isEmpty() ? "tl" : readable) + "-" + hash(name);
    }

    private static String hash(String s) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d).substring(0, HASH_HEX);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java runtime", e);
        }
    }
}
