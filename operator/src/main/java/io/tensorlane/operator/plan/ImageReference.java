package io.tensorlane.operator.plan;

import java.util.regex.Pattern;

/**
 * The container image reference grammar (the distribution project's: [domain[:port]/]path[:tag][@digest]). The API
 * server stores any string as an image; the kubelet then fails the pod with InvalidImageName, which a rollout would
 * only show as a pod that never starts. Pure.
 */
public final class ImageReference {
    private static final String DOMAIN_PART = "[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?";
    private static final String DOMAIN = DOMAIN_PART + "(?:\\." + DOMAIN_PART + ")*(?::[0-9]+)?";
    private static final String PATH = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
    private static final String TAG = "[\\w][\\w.-]{0,127}";
    private static final String DIGEST = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
    private static final Pattern REFERENCE =
            Pattern.compile("(?:" + DOMAIN + "/)?" + PATH + "(?:/" + PATH + ")*(?::" + TAG + ")?(?:@" + DIGEST + ")?");

    private ImageReference() {}

    /** True when {@code image} is a valid reference. */
    public static boolean valid(String image) {
        return image != null
                && image.length() <= 4096
                && REFERENCE.matcher(image).matches();
    }
}
