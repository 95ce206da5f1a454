package io.tensorlane.modelfacts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.modelfacts.HubException.Kind;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The Hugging Face Hub API as Tensorlane uses it, on the JDK's HTTP client; the one client of the operator's inspection
 * (a revision, config.json, Range reads of safetensors headers) and the runtime's {@code fetch-model} (a revision, whole
 * files streamed and resumed with Range). Two endpoints: {@code GET /api/models/{id}/revision/{rev}?blobs=true} (the
 * commit, the files and their sizes) and {@code GET /{id}/resolve/{commit}/{file}} (a file, usually a redirect to a
 * CDN).
 *
 * <p>The token goes in {@code Authorization: Bearer} to the endpoint's own origin only: redirects are followed by hand
 * and once one leaves that origin (the Hub sends files to a CDN with signed URLs) no later request carries it. The token
 * is never part of a message. Each call is one attempt: a failure the Hub answers is a {@link HubException} whose kind
 * says what to do (and whether to retry), a connection that fails is an {@link IOException}; callers retry.
 */
public final class HubClient {
    /** Largest file {@link #small} reads whole (config.json). */
    public static final int MAX_SMALL_FILE = 4 * 1024 * 1024;

    static final int MAX_REDIRECTS = 10;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The commit a revision resolved to and its files (with sizes where the Hub gave them). */
    public record Revision(String sha, List<String> files, Map<String, Long> sizes) {}

    /**
     * What a 401/403 message tells the user to do, the caller's words (where the token comes from differs).
     *
     * @param withoutToken when no token was sent
     * @param withToken when the token sent was refused
     */
    public record TokenHint(String withoutToken, String withToken) {}

    private final URI endpoint;
    /** The endpoint as messages show it (no user info, no query). */
    private final String shown;

    private final HttpClient http;
    private final Duration timeout;
    private final String userAgent;
    private final TokenHint hint;

    /**
     * @param endpoint the Hub's base URL
     * @param timeout connect and response-header timeout of each request
     */
    public HubClient(URI endpoint, Duration timeout, String userAgent, TokenHint hint) {
        this.endpoint = endpoint;
        this.shown = endpoint.getScheme() + "://" + endpoint.getHost()
                + (endpoint.getPort() == -1 ? "" : ":" + endpoint.getPort())
                + (endpoint.getRawPath() == null ? "" : endpoint.getRawPath());
        this.timeout = timeout;
        this.userAgent = userAgent;
        this.hint = hint;
        // HTTP/1.1: one long stream per file (HTTP/2 flow-control windows slow a single multi-GB stream); redirects by
        // hand
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .followRedirects(HttpClient.Redirect.NEVER)
                .connectTimeout(timeout)
                .build();
    }

    /** The endpoint as messages show it. */
    public String shown() {
        return shown;
    }

    /** The commit and the files of revision {@code rev} (a branch, tag or commit) of model {@code id}. */
    public Revision revision(String id, String rev, String token) throws IOException, InterruptedException {
        String what = "model " + id + " (revision '" + rev + "')";
        HttpResponse<InputStream> r = send(
                URI.create(base() + "/api/models/" + id + "/revision/" + segment(rev) + "?blobs=true"), null, token);
        try (InputStream body = r.body()) {
            if (r.statusCode() != 200) {
                throw failure(r, what, token);
            }
            JsonNode root;
            try {
                root = JSON.readTree(body);
            } catch (JsonProcessingException e) {
                throw new HubException(
                        Kind.MALFORMED,
                        "the model API at " + shown + " answered with something that is not JSON " + "for " + what
                                + " (is the endpoint a Hugging Face Hub?)");
            }
            String sha = root == null ? null : root.path("sha").asText(null);
            JsonNode siblings = root == null ? null : root.get("siblings");
            if (sha == null || sha.isBlank() || siblings == null || !siblings.isArray()) {
                throw new HubException(
                        Kind.MALFORMED,
                        "the model API at " + shown + " answered for " + what
                                + " without \"sha\" and \"siblings\" (is the endpoint a Hugging Face Hub?)");
            }
            List<String> files = new ArrayList<>();
            Map<String, Long> sizes = new LinkedHashMap<>();
            for (JsonNode s : siblings) {
                String name = s.path("rfilename").asText(null);
                if (name == null || name.isBlank()) {
                    continue;
                }
                files.add(name);
                JsonNode size = s.has("size") ? s.get("size") : s.path("lfs").get("size");
                if (size != null && size.canConvertToLong() && size.longValue() >= 0) {
                    sizes.put(name, size.longValue());
                }
            }
            return new Revision(sha, files, sizes);
        }
    }

    /**
     * The response for a file at a commit, redirects followed, whatever its status: the caller reads the body (and
     * closes it) or turns the status into {@link #failure}.
     *
     * @param range a Range header value ({@code bytes=F-} or {@code bytes=F-T}), or null for the whole file
     */
    public HttpResponse<InputStream> file(String id, String sha, String file, String range, String token)
            throws IOException, InterruptedException {
        return send(URI.create(base() + "/" + id + "/resolve/" + segment(sha) + "/" + path(file)), range, token);
    }

    /** A small file (config.json) whole, at most {@link #MAX_SMALL_FILE} bytes. */
    public byte[] small(String id, String sha, String file, String token) throws IOException, InterruptedException {
        String what = what(id, sha, file);
        HttpResponse<InputStream> r = file(id, sha, file, null, token);
        try (InputStream body = r.body()) {
            if (r.statusCode() != 200) {
                throw failure(r, what, token);
            }
            byte[] b = body.readNBytes(MAX_SMALL_FILE + 1);
            if (b.length > MAX_SMALL_FILE) {
                throw new HubException(Kind.MALFORMED, what + " is larger than " + MAX_SMALL_FILE + " bytes");
            }
            return b;
        }
    }

    /**
     * Bytes [from, to] (inclusive) of a file through a Range request; from a server that ignores Range (200) only those
     * bytes of the whole body are read, never more.
     */
    public byte[] range(String id, String sha, String file, long from, long to, String token)
            throws IOException, InterruptedException {
        String what = what(id, sha, file);
        long n = to - from + 1;
        if (n > Integer.MAX_VALUE - 8) {
            throw new HubException(Kind.MALFORMED, what + ": range of " + n + " bytes is too large");
        }
        HttpResponse<InputStream> r = file(id, sha, file, "bytes=" + from + "-" + to, token);
        try (InputStream body = r.body()) {
            if (r.statusCode() != 206 && r.statusCode() != 200) {
                throw failure(r, what, token);
            }
            if (r.statusCode() == 200) {
                body.skipNBytes(Math.min(
                        from, r.headers().firstValueAsLong("Content-Length").orElse(Long.MAX_VALUE)));
            }
            byte[] b = body.readNBytes((int) n);
            if (b.length != n) {
                throw new HubException(
                        Kind.MALFORMED,
                        what + ": asked for " + n + " bytes at " + from + ", got " + b.length
                                + " (file shorter than its header says?)");
            }
            return b;
        }
    }

    /** How messages name a file of a commit. */
    public static String what(String id, String sha, String file) {
        return "file " + file + " of " + id + " at commit " + sha;
    }

    /** The failure for an HTTP status other than success; {@code what} names the thing asked for. */
    public HubException failure(HttpResponse<?> r, String what, String token) {
        int status = r.statusCode();
        String code = r.headers().firstValue("X-Error-Code").orElse("");
        if (status == 401 || status == 403) {
            String notFound =
                    "RepoNotFound".equals(code) ? " (the Hub says the repository does not exist or is private)" : "";
            return new HubException(
                    Kind.UNAUTHORIZED,
                    "not allowed to read " + what + " from " + shown + ": HTTP " + status + notFound + "; "
                            + (present(token) ? hint.withToken() : hint.withoutToken()));
        }
        if (status == 404) {
            String which = switch (code) {
                case "RevisionNotFound" -> "the revision does not exist";
                case "RepoNotFound" -> "the model does not exist";
                case "EntryNotFound" -> "the file does not exist at that commit";
                default -> "no such model, revision or file";
            };
            return new HubException(Kind.NOT_FOUND, what + " at " + shown + ": HTTP 404, " + which);
        }
        return new HubException(
                retryable(status) ? Kind.UNREACHABLE : Kind.MALFORMED, what + " at " + shown + ": HTTP " + status);
    }

    /** Whether a failed status is worth another attempt (server errors, rate limits, time-outs). */
    static boolean retryable(int status) {
        return status >= 500 || status == 429 || status == 408;
    }

    private String base() {
        String s = endpoint.toString();
        return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
    }

    private static boolean present(String token) {
        return token != null && !token.isBlank();
    }

    private HttpResponse<InputStream> send(URI start, String range, String token)
            throws IOException, InterruptedException {
        URI uri = start;
        boolean toOrigin = true;
        for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
            toOrigin = toOrigin && sameOrigin(uri, endpoint);
            HttpRequest.Builder b =
                    HttpRequest.newBuilder(uri).GET().timeout(timeout).header("User-Agent", userAgent);
            if (present(token) && toOrigin) {
                b.header("Authorization", "Bearer " + token.trim());
            }
            if (range != null) {
                b.header("Range", range);
            }
            HttpResponse<InputStream> r = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
            Optional<String> location = r.headers().firstValue("Location");
            if (isRedirect(r.statusCode()) && location.isPresent()) {
                r.body().close();
                uri = uri.resolve(location.get());
                continue;
            }
            return r;
        }
        throw new HubException(Kind.MALFORMED, "more than " + MAX_REDIRECTS + " redirects from " + start.getPath());
    }

    static boolean isRedirect(int status) {
        return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
    }

    /** Same scheme, host (any case) and port (the scheme's default when none is written). */
    static boolean sameOrigin(URI a, URI b) {
        return Objects.equals(a.getScheme(), b.getScheme())
                && a.getHost() != null
                && a.getHost().equalsIgnoreCase(b.getHost())
                && port(a) == port(b);
    }

    private static int port(URI u) {
        return u.getPort() != -1 ? u.getPort() : "https".equalsIgnoreCase(u.getScheme()) ? 443 : 80;
    }

    /** A revision or commit as one URL path segment ('/' in refs/pr/1 encoded). */
    static String segment(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A file path in a URL: each segment encoded, '/' kept. */
    static String path(String file) {
        StringBuilder sb = new StringBuilder();
        for (String seg : file.split("/", -1)) {
            sb.append(sb.isEmpty() ? "" : "/").append(segment(seg));
        }
        return sb.toString();
    }
}
