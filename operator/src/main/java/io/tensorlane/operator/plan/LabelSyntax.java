package io.tensorlane.operator.plan;

import java.util.regex.Pattern;

/** Kubernetes label key and value syntax (what the API server checks on labels and node selectors). Pure. */
public final class LabelSyntax {
    private static final Pattern NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
    private static final Pattern DNS_1123_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private LabelSyntax() {}

    /** Why {@code key} is not a label key ([prefix/]name), or null. */
    public static String keyProblem(String key) {
        if (key == null || key.isEmpty()) {
            return "a label key must not be empty";
        }
        int slash = key.indexOf('/');
        String prefix = slash < 0 ? null : key.substring(0, slash);
        String name = slash < 0 ? key : key.substring(slash + 1);
        if (prefix != null
                && (prefix.isEmpty()
                        || prefix.length() > 253
                        || !DNS_1123_SUBDOMAIN.matcher(prefix).matches())) {
            return "the key's prefix must be a DNS subdomain (lower case letters, digits, '-' and '.')";
        }
        if (name.isEmpty() || name.length() > 63 || !NAME.matcher(name).matches()) {
            return "the key's name must be at most 63 characters of letters, digits, '-', '_' and '.', starting and ending "
                    + "with a letter or digit";
        }
        return null;
    }

    /** Why {@code value} is not a label value, or null. */
    public static String valueProblem(String value) {
        if (value == null || value.isEmpty()) {
            return null;
        }
        if (value.length() > 63 || !NAME.matcher(value).matches()) {
            return "a label value must be at most 63 characters of letters, digits, '-', '_' and '.', starting and ending "
                    + "with a letter or digit";
        }
        return null;
    }
}
