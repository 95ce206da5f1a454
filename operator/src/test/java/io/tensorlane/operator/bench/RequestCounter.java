package io.tensorlane.operator.bench;

import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the API requests one client sends, by verb and resource ("PATCH inferencedeployments/status", "POST events",
 * "PATCH deployments dryRun", "GET pods watch"), as the client's interceptor: every request the operator sends, retries
 * included, without an audit log on the API server. Writes are POST, PUT, PATCH and DELETE without {@code dryRun}.
 */
final class RequestCounter implements Interceptor {
    private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

    @Override
    public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        counts.computeIfAbsent(
                        key(
                                request.method(),
                                request.uri().getRawPath(),
                                request.uri().getRawQuery()),
                        k -> new LongAdder())
                .increment();
    }

    /** "PATCH inferencedeployments/status", "POST events", "PATCH deployments dryRun", "GET pods watch". */
    static String key(String method, String path, String query) {
        String[] p = path.split("/");
        // /api/v1/[namespaces/ns/]resource[/name[/sub]] or /apis/group/version/[namespaces/ns/]resource[/name[/sub]]
        int i = p.length > 1 && "apis".equals(p[1]) ? 4 : 3;
        if (p.length > i + 1 && "namespaces".equals(p[i])) {
            i += 2;
        }
        String resource = p.length > i ? p[i] : path;
        if (p.length > i + 2) {
            resource += "/" + p[i + 2];
        }
        String q = query == null ? "" : query;
        String suffix = q.contains("dryRun=") ? " dryRun" : q.contains("watch=true") ? " watch" : "";
        return method + " " + resource + suffix;
    }

    static boolean isWrite(String key) {
        return !key.endsWith(" dryRun")
                && (key.startsWith("POST ")
                        || key.startsWith("PUT ")
                        || key.startsWith("PATCH ")
                        || key.startsWith("DELETE "));
    }

    /** A copy of the counts so far, sorted by key. */
    Map<String, Long> snapshot() {
        Map<String, Long> m = new TreeMap<>();
        counts.forEach((k, v) -> m.put(k, v.sum()));
        return m;
    }

    /** {@code after} minus {@code before}, without zeros. */
    static Map<String, Long> minus(Map<String, Long> after, Map<String, Long> before) {
        Map<String, Long> m = new TreeMap<>();
        after.forEach((k, v) -> {
            long d = v - before.getOrDefault(k, 0L);
            if (d != 0) {
                m.put(k, d);
            }
        });
        return m;
    }

    static long writes(Map<String, Long> counts) {
        return counts.entrySet().stream()
                .filter(e -> isWrite(e.getKey()))
                .mapToLong(Map.Entry::getValue)
                .sum();
    }

    /** "status 2.00, deployments 1.00, ..." per object: the writes among {@code counts} divided by {@code n}. */
    static String perObject(Map<String, Long> counts, int n) {
        StringBuilder b = new StringBuilder();
        counts.forEach((k, v) -> {
            if (isWrite(k)) {
                b.append(b.length() == 0 ? "" : ", ")
                        .append(k)
                        .append(' ')
                        .append(String.format("%.2f", v / (double) n));
            }
        });
        return b.toString();
    }
}
