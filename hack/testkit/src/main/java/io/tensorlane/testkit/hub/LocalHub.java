package io.tensorlane.testkit.hub;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A loopback Hugging Face Hub (tests of the operator's inspection and the runtime's fetch-model, the demo:
 * {@code tensorlane-testkit hub}) speaking the two endpoints Tensorlane uses: {@code GET /api/models/{id}/revision/{rev}}
 * ({sha, siblings[].rfilename, siblings[].size}) and {@code GET /{id}/resolve/{rev}/{file}} with Range support, with
 * the Hub's {@code X-Error-Code} on failures (RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo). A repository
 * may require a token (401 without it or with a wrong one). Files can be redirected to a "CDN": a second server on
 * another port (another origin, which must never see the token) under {@code /cdn/...}. Every request is recorded.
 * The public knobs below make it fail the way the Hub and networks do (the runtime's resume and retry tests).
 */
public final class LocalHub implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern REVISION = Pattern.compile("^/api/models/(.+)/revision/([^/]+)$");
    private static final Pattern RESOLVE = Pattern.compile("^/(?:cdn/)?(.+?)/resolve/([^/]+)/(.+)$");
    private static final Pattern RANGE = Pattern.compile("^bytes=(\\d+)-(\\d*)$");

    /**
     * A repository at one commit (revisions {@code main} and the sha resolve to it).
     *
     * @param files name → bytes, in listing order (a mutable map may be changed while the hub runs)
     * @param token the token the repository requires, or null
     * @param redirectSafetensors its *.safetensors files are answered with a redirect to the CDN
     */
    public record Repo(String sha, Map<String, byte[]> files, String token, boolean redirectSafetensors) {
        public Repo withToken(String token) {
            return new Repo(sha, files, token, redirectSafetensors);
        }
    }

    /** One request as a server saw it; {@code cdn}: the CDN server got it. */
    public record Request(String path, String authorization, String range, boolean cdn) {}

    // --- knobs (every repository) ---
    /** The token guards files only (a gated model: its metadata is public, its files are not). */
    public volatile boolean gatedFilesOnly;
    /** Redirect every file of every repository to the CDN (not only safetensors of {@link Repo#redirectSafetensors}). */
    public volatile boolean redirectAllFiles;
    /** List each file's size in the revision API (the Hub does with ?blobs=true). */
    public volatile boolean listSizes = true;
    /** Files: the sizes the API lists instead of the real ones. */
    public final Map<String, Long> listedSizes = new ConcurrentHashMap<>();
    /** Files: answer 200 with the whole file to a Range request. */
    public volatile boolean ignoreRange;
    /** Files: the next {@code cuts} responses stop after {@link #cutAt} bytes (the connection is dropped). */
    public final AtomicInteger cuts = new AtomicInteger();

    public volatile long cutAt;
    /** Files: after {@link #cutAt} bytes, the next {@code stalls} responses send nothing for {@link #stallMillis}. */
    public final AtomicInteger stalls = new AtomicInteger();

    public volatile long stallMillis;
    /** The next {@code failures} requests (any endpoint, either server) answer {@link #failStatus}. */
    public final AtomicInteger failures = new AtomicInteger();

    public volatile int failStatus = 500;
    /** The X-Error-Code of the injected failures, or null. */
    public volatile String failErrorCode;

    private final HttpServer hub;
    private final HttpServer cdn;
    private final Map<String, Repo> repos = new ConcurrentHashMap<>();
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final AtomicInteger delayMillis = new AtomicInteger();

    /** On a free loopback port. */
    public LocalHub() throws IOException {
        this(0);
    }

    /** On loopback {@code port} (0: a free one); the CDN on a free one. */
    public LocalHub(int port) throws IOException {
        hub = start(port, false);
        cdn = start(0, true);
    }

    private HttpServer start(int port, boolean isCdn) throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        s.setExecutor(Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "local-hub");
            t.setDaemon(true);
            return t;
        }));
        s.createContext("/", ex -> handle(ex, isCdn));
        s.start();
        return s;
    }

    /** http://127.0.0.1:port */
    public String endpoint() {
        return "http://127.0.0.1:" + hub.getAddress().getPort();
    }

    public void put(String id, Repo repo) {
        repos.put(id, repo);
    }

    public Repo repo(String id) {
        return repos.get(id);
    }

    /** Answers every request only after this many milliseconds (to observe InspectingModel). */
    public void delay(int millis) {
        delayMillis.set(millis);
    }

    public List<Request> requests() {
        return List.copyOf(requests);
    }

    public void clearRequests() {
        requests.clear();
    }

    /** Requests for files (not the API), on either server. */
    public List<Request> fileRequests() {
        return requests.stream().filter(r -> r.path().contains("/resolve/")).toList();
    }

    public List<Request> apiRequests() {
        return requests.stream().filter(r -> r.path().startsWith("/api/")).toList();
    }

    public long count(String pathPrefix) {
        return requests.stream().filter(r -> r.path().startsWith(pathPrefix)).count();
    }

    private void handle(HttpExchange ex, boolean onCdn) throws IOException {
        try (ex) {
            String raw = ex.getRequestURI().getRawPath();
            String auth = ex.getRequestHeaders().getFirst("Authorization");
            String range = ex.getRequestHeaders().getFirst("Range");
            requests.add(new Request(URLDecoder.decode(raw, StandardCharsets.UTF_8), auth, range, onCdn));
            sleep(delayMillis.get());
            if (failures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                send(ex, failStatus, failErrorCode, "injected");
                return;
            }
            Matcher api = REVISION.matcher(raw);
            Matcher res = RESOLVE.matcher(raw);
            if (!onCdn && api.matches()) {
                Repo repo = authorized(ex, decode(api.group(1)), auth, true);
                if (repo != null) {
                    revision(ex, decode(api.group(1)), repo, decode(api.group(2)));
                }
            } else if (res.matches() && (onCdn || !raw.startsWith("/cdn/"))) {
                String id = decode(res.group(1));
                Repo repo = onCdn ? repos.get(id) : authorized(ex, id, auth, false);
                if (onCdn && repo == null) {
                    send(ex, 404, "RepoNotFound", "Repository not found");
                } else if (repo != null) {
                    file(ex, onCdn, id, repo, decode(res.group(2)), decode(res.group(3)), range);
                }
            } else {
                send(ex, 404, "RepoNotFound", "Repository not found");
            }
        }
    }

    /** The repository, or null when the answer (404, 401) is sent. */
    private Repo authorized(HttpExchange ex, String id, String auth, boolean api) throws IOException {
        Repo repo = repos.get(id);
        if (repo == null) {
            send(ex, 404, "RepoNotFound", "Repository not found");
            return null;
        }
        if (repo.token() != null && !(api && gatedFilesOnly) && !("Bearer " + repo.token()).equals(auth)) {
            send(ex, 401, "GatedRepo", "Access to model " + id + " is restricted.");
            return null;
        }
        return repo;
    }

    private void revision(HttpExchange ex, String id, Repo repo, String rev) throws IOException {
        if (!rev.equals("main") && !rev.equals(repo.sha())) {
            send(ex, 404, "RevisionNotFound", "Invalid rev id: " + rev);
            return;
        }
        ObjectNode root =
                JSON.createObjectNode().put("id", id).put("sha", repo.sha()).put("private", false);
        ArrayNode siblings = root.putArray("siblings");
        for (Map.Entry<String, byte[]> f : snapshot(repo)) {
            ObjectNode s = siblings.addObject().put("rfilename", f.getKey());
            if (listSizes) {
                s.put("size", listedSizes.getOrDefault(f.getKey(), (long) f.getValue().length));
            }
        }
        byte[] b = root.toString().getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        ex.sendResponseHeaders(200, b.length);
        ex.getResponseBody().write(b);
    }

    private static List<Map.Entry<String, byte[]>> snapshot(Repo repo) {
        synchronized (repo.files()) {
            return new ArrayList<>(repo.files().entrySet());
        }
    }

    private void file(HttpExchange ex, boolean onCdn, String id, Repo repo, String rev, String name, String range)
            throws IOException {
        byte[] data = repo.files().get(name);
        if (!rev.equals("main") && !rev.equals(repo.sha()) || data == null) {
            send(
                    ex,
                    404,
                    rev.equals("main") || rev.equals(repo.sha()) ? "EntryNotFound" : "RevisionNotFound",
                    "Entry not found");
            return;
        }
        if (!onCdn && (redirectAllFiles || repo.redirectSafetensors() && name.endsWith(".safetensors"))) {
            ex.getResponseHeaders()
                    .add(
                            "Location",
                            "http://127.0.0.1:" + cdn.getAddress().getPort() + "/cdn/" + id + "/resolve/" + repo.sha()
                                    + "/" + name);
            ex.sendResponseHeaders(302, -1);
            return;
        }
        Matcher m = range == null || ignoreRange ? null : RANGE.matcher(range);
        int from = 0;
        int to = data.length - 1;
        if (m != null && m.matches()) {
            from = (int) Math.min(Long.parseLong(m.group(1)), Integer.MAX_VALUE);
            if (from >= data.length) {
                ex.getResponseHeaders().add("Content-Range", "bytes */" + data.length);
                ex.sendResponseHeaders(416, -1);
                return;
            }
            to = m.group(2).isEmpty() ? to : (int) Math.min(Long.parseLong(m.group(2)), to);
            ex.getResponseHeaders().add("Content-Range", "bytes " + from + "-" + to + "/" + data.length);
            ex.sendResponseHeaders(206, to - from + 1);
        } else {
            ex.sendResponseHeaders(200, data.length);
        }
        OutputStream os = ex.getResponseBody();
        boolean broken = cutAt > from && cutAt <= to;
        if (broken && cuts.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            os.write(data, from, (int) cutAt - from);
            os.flush();
            throw new IOException("cut by the test"); // the exchange closes with bytes missing: the connection drops
        }
        if (broken && stalls.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            os.write(data, from, (int) cutAt - from);
            os.flush();
            sleep(stallMillis);
            throw new IOException("stalled by the test");
        }
        os.write(data, from, to - from + 1);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    private static void sleep(long ms) {
        if (ms <= 0) {
            return;
        }
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void send(HttpExchange ex, int status, String errorCode, String error) throws IOException {
        if (errorCode != null) {
            ex.getResponseHeaders().add("X-Error-Code", errorCode);
        }
        byte[] b = JSON.createObjectNode().put("error", error).toString().getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        ex.sendResponseHeaders(status, b.length);
        ex.getResponseBody().write(b);
    }

    @Override
    public void close() {
        for (HttpServer s : List.of(hub, cdn)) {
            s.stop(0);
            ((ExecutorService) s.getExecutor()).shutdownNow();
        }
    }
}
