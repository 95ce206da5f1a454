package io.tensorlane.runtime.fetch;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A loopback server that speaks the two Hub endpoints fetch-model uses: {@code GET /api/models/{id}/revision/{rev}}
 * and {@code GET /{id}/resolve/{rev}/{file}} (Range supported), optionally behind a token, optionally redirecting files
 * to a second server on another port (a "CDN" that must never see the token). Knobs make it fail the way the Hub and
 * networks do: cut a response midway, ignore Range, answer a status, stall.
 */
final class FakeHub implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern API = Pattern.compile("/api/models/([^/]+/[^/]+)/revision/([^?]+)");
  private static final Pattern RESOLVE = Pattern.compile("/(?:cdn/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)");
  private static final Pattern RANGE = Pattern.compile("bytes=(\\d+)-");

  /** One request as the server saw it. */
  record Seen(int port, String path, String range, String authorization) {}

  final String id;
  final String sha;
  final Map<String, String> refs = new ConcurrentHashMap<>();
  /** The repository's files at {@link #sha}, in order. */
  final Map<String, byte[]> files = java.util.Collections.synchronizedMap(new java.util.LinkedHashMap<>());
  final List<Seen> seen = new CopyOnWriteArrayList<>();
  private final HttpServer hub;
  private final HttpServer cdn;

  volatile String requiredToken;
  /** The token guards files only (a gated model: its metadata is public, its files are not). */
  volatile boolean gatedFilesOnly;
  volatile boolean listSizes = true;
  volatile boolean ignoreRange;
  volatile boolean redirectToCdn;
  /** Files: the next {@code cuts} responses stop after {@link #cutAt} bytes (the connection is dropped). */
  final AtomicInteger cuts = new AtomicInteger();
  volatile long cutAt;
  /** The next {@code failures} requests (any endpoint) answer {@link #failStatus}. */
  final AtomicInteger failures = new AtomicInteger();
  volatile int failStatus = 500;
  volatile String failErrorCode;
  /** Files: after {@link #cutAt} bytes, the next {@code stalls} responses stop sending for {@link #stallMillis}. */
  final AtomicInteger stalls = new AtomicInteger();
  volatile long stallMillis;
  /** Files: the sizes the API lists instead of the real ones. */
  final Map<String, Long> listedSizes = new ConcurrentHashMap<>();

  FakeHub(String id, String sha) throws IOException {
    this.id = id;
    this.sha = sha;
    refs.put("main", sha);
    refs.put(sha, sha);
    hub = start();
    cdn = start();
  }

  private HttpServer start() throws IOException {
    HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    s.createContext("/", this::handle);
    s.setExecutor(Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "fake-hub");
      t.setDaemon(true);
      return t;
    }));
    s.start();
    return s;
  }

  String endpoint() {
    return "http://127.0.0.1:" + hub.getAddress().getPort();
  }

  int cdnPort() {
    return cdn.getAddress().getPort();
  }

  /** Requests to files (not the API), on either server. */
  List<Seen> fileRequests() {
    return seen.stream().filter(s -> s.path().contains("/resolve/")).toList();
  }

  List<Seen> apiRequests() {
    return seen.stream().filter(s -> s.path().startsWith("/api/")).toList();
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String path = ex.getRequestURI().getRawPath();
      String auth = ex.getRequestHeaders().getFirst("Authorization");
      int port = ex.getLocalAddress().getPort();
      seen.add(new Seen(port, path, ex.getRequestHeaders().getFirst("Range"), auth));
      if (failures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        if (failErrorCode != null) {
          ex.getResponseHeaders().add("X-Error-Code", failErrorCode);
        }
        send(ex, failStatus, "{\"error\":\"injected\"}");
        return;
      }
      boolean onCdn = port == cdnPort();
      boolean guarded = !onCdn && requiredToken != null && !(gatedFilesOnly && path.startsWith("/api/"));
      if (guarded && !("Bearer " + requiredToken).equals(auth)) {
        ex.getResponseHeaders().add("X-Error-Code", "GatedRepo");
        send(ex, 401, "{\"error\":\"Access to model " + id + " is restricted.\"}");
        return;
      }
      Matcher api = API.matcher(path);
      Matcher res = RESOLVE.matcher(path);
      if (!onCdn && api.matches()) {
        revision(ex, api.group(1), URLDecoder.decode(api.group(2), StandardCharsets.UTF_8));
      } else if (res.matches() && res.group(1).equals(id)) {
        if (!onCdn && redirectToCdn) {
          ex.getResponseHeaders().add("Location", "http://127.0.0.1:" + cdnPort() + "/cdn" + path);
          send(ex, 302, "");
          return;
        }
        file(ex, URLDecoder.decode(res.group(2), StandardCharsets.UTF_8), URLDecoder.decode(res.group(3), StandardCharsets.UTF_8));
      } else {
        ex.getResponseHeaders().add("X-Error-Code", "RepoNotFound");
        send(ex, 404, "{\"error\":\"Repository not found\"}");
      }
    }
  }

  private void revision(HttpExchange ex, String model, String rev) throws IOException {
    if (!model.equals(id)) {
      ex.getResponseHeaders().add("X-Error-Code", "RepoNotFound");
      send(ex, 404, "{\"error\":\"Repository not found\"}");
      return;
    }
    if (!refs.containsKey(rev)) {
      ex.getResponseHeaders().add("X-Error-Code", "RevisionNotFound");
      send(ex, 404, "{\"error\":\"Invalid rev id: " + rev + "\"}");
      return;
    }
    ObjectNode root = JSON.createObjectNode().put("id", id).put("sha", refs.get(rev)).put("private", false);
    ArrayNode siblings = root.putArray("siblings");
    synchronized (files) {
      files.forEach((name, bytes) -> {
        ObjectNode s = siblings.addObject().put("rfilename", name);
        if (listSizes) {
          s.put("size", listedSizes.getOrDefault(name, (long) bytes.length));
        }
      });
    }
    send(ex, 200, root.toString());
  }

  private void file(HttpExchange ex, String rev, String name) throws IOException {
    byte[] data = files.get(name);
    if (!sha.equals(refs.get(rev)) || data == null) {
      ex.getResponseHeaders().add("X-Error-Code", "EntryNotFound");
      send(ex, 404, "{\"error\":\"Entry not found\"}");
      return;
    }
    String range = ex.getRequestHeaders().getFirst("Range");
    Matcher m = range == null || ignoreRange ? null : RANGE.matcher(range);
    long from = 0;
    if (m != null && m.matches()) {
      from = Long.parseLong(m.group(1));
      if (from >= data.length) {
        ex.getResponseHeaders().add("Content-Range", "bytes */" + data.length);
        ex.sendResponseHeaders(416, -1);
        return;
      }
      ex.getResponseHeaders().add("Content-Range", "bytes " + from + "-" + (data.length - 1) + "/" + data.length);
      ex.sendResponseHeaders(206, data.length - from);
    } else {
      ex.sendResponseHeaders(200, data.length);
    }
    OutputStream os = ex.getResponseBody();
    int start = (int) from;
    if (cutAt > from && cutAt < data.length && cuts.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      os.write(data, start, (int) cutAt - start);
      os.flush();
      throw new IOException("cut by the test");   // the exchange closes with bytes missing: the connection drops
    }
    if (cutAt > from && cutAt < data.length && stalls.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      os.write(data, start, (int) cutAt - start);
      os.flush();
      sleep(stallMillis);
      throw new IOException("stalled by the test");
    }
    os.write(data, start, data.length - start);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void send(HttpExchange ex, int status, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("Content-Type", "application/json");
    ex.sendResponseHeaders(status, b.length == 0 ? -1 : b.length);
    if (b.length > 0) {
      ex.getResponseBody().write(b);
    }
  }

  @Override
  public void close() {
    hub.stop(0);
    cdn.stop(0);
  }
}
