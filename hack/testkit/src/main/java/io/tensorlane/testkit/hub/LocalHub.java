package io.tensorlane.testkit.hub;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A loopback HTTP server (tests, the demo: {@code tensorlane-testkit hub}) that speaks the part of the Hugging Face Hub file API inspection and downloads use:
 * {@code GET /api/models/{id}/revision/{rev}} ({sha, siblings[].rfilename}) and {@code GET /{id}/resolve/{rev}/{file}}
 * with Range support. A repository may require a token (401 without or with a wrong one); large files can be
 * redirected to {@code /cdn/...} on another host name of the same server ({@code localhost} instead of
 * {@code 127.0.0.1}) the way the Hub sends them to its CDN. Every request is recorded.
 */
public final class LocalHub implements AutoCloseable {
  private static final Pattern REVISION = Pattern.compile("^/api/models/(.+)/revision/([^/]+)$");
  private static final Pattern RESOLVE = Pattern.compile("^/(.+?/.+?)/resolve/([^/]+)/(.+)$");
  private static final Pattern RANGE = Pattern.compile("^bytes=(\\d+)-(\\d+)$");

  /** A repository at one commit. */
  public record Repo(String sha, Map<String, byte[]> files, String token, boolean redirectSafetensors) {
  }

  /** One request as the server saw it. */
  public record Request(String path, String authorization, String range) {
  }

  private final HttpServer server;
  private final Map<String, Repo> repos = new ConcurrentHashMap<>();
  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private final AtomicInteger delayMillis = new AtomicInteger();

  /** On a free loopback port. */
  public LocalHub() throws IOException {
    this(0);
  }

  /** On loopback {@code port} (0: a free one). */
  public LocalHub(int port) throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
    server.setExecutor(Executors.newFixedThreadPool(4, r -> {
      Thread t = new Thread(r, "local-hub");
      t.setDaemon(true);
      return t;
    }));
    server.createContext("/", this::handle);
    server.start();
  }

  /** http://127.0.0.1:port */
  public String endpoint() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  public void put(String id, Repo repo) {
    repos.put(id, repo);
  }

  /** Answers every request only after this many milliseconds (to observe InspectingModel). */
  public void delay(int millis) {
    delayMillis.set(millis);
  }

  public List<Request> requests() {
    return Collections.unmodifiableList(new ArrayList<>(requests));
  }

  public long count(String pathPrefix) {
    return requests.stream().filter(r -> r.path().startsWith(pathPrefix)).count();
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String path = URLDecoder.decode(ex.getRequestURI().getRawPath(), StandardCharsets.UTF_8);
      String auth = ex.getRequestHeaders().getFirst("Authorization");
      String range = ex.getRequestHeaders().getFirst("Range");
      requests.add(new Request(path, auth, range));
      int d = delayMillis.get();
      if (d > 0) {
        Thread.sleep(d);
      }
      if (path.startsWith("/cdn/")) {
        String[] p = path.substring("/cdn/".length()).split("/", 4); // org/name/sha/file
        Repo repo = repos.get(p[0] + "/" + p[1]);
        serveFile(ex, repo == null ? null : repo.files().get(p[3]), range);
        return;
      }
      Matcher m = REVISION.matcher(path);
      if (m.matches()) {
        Repo repo = authorized(ex, m.group(1), auth);
        if (repo == null) {
          return;
        }
        if (!m.group(2).equals("main") && !m.group(2).equals(repo.sha())) {
          send(ex, 404, "{\"error\": \"Revision Not Found\"}");
          return;
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", m.group(1));
        body.put("sha", repo.sha());
        body.put("siblings", repo.files().keySet().stream().map(f -> Map.of("rfilename", f)).toList());
        send(ex, 200, new ObjectMapper().writeValueAsString(body));
        return;
      }
      m = RESOLVE.matcher(path);
      if (m.matches()) {
        Repo repo = authorized(ex, m.group(1), auth);
        if (repo == null) {
          return;
        }
        if (!m.group(2).equals(repo.sha()) && !m.group(2).equals("main")) {
          send(ex, 404, "{\"error\": \"Revision Not Found\"}");
          return;
        }
        if (repo.redirectSafetensors() && m.group(3).endsWith(".safetensors")) {
          ex.getResponseHeaders().add("Location", "http://localhost:" + server.getAddress().getPort() + "/cdn/"
              + m.group(1) + "/" + repo.sha() + "/" + m.group(3));
          ex.sendResponseHeaders(302, -1);
          return;
        }
        serveFile(ex, repo.files().get(m.group(3)), range);
        return;
      }
      send(ex, 404, "{\"error\": \"not found\"}");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private Repo authorized(HttpExchange ex, String id, String auth) throws IOException {
    Repo repo = repos.get(id);
    if (repo == null) {
      send(ex, 404, "{\"error\": \"Repository Not Found\"}");
      return null;
    }
    if (repo.token() != null && !("Bearer " + repo.token()).equals(auth)) {
      send(ex, 401, "{\"error\": \"Access to model " + id + " is restricted.\"}");
      return null;
    }
    return repo;
  }

  private static void serveFile(HttpExchange ex, byte[] data, String range) throws IOException {
    if (data == null) {
      send(ex, 404, "{\"error\": \"Entry Not Found\"}");
      return;
    }
    Matcher r = range == null ? null : RANGE.matcher(range);
    if (r != null && r.matches()) {
      int from = Integer.parseInt(r.group(1));
      int to = Math.min(Integer.parseInt(r.group(2)), data.length - 1);
      byte[] part = java.util.Arrays.copyOfRange(data, from, to + 1);
      ex.getResponseHeaders().add("Content-Range", "bytes " + from + "-" + to + "/" + data.length);
      ex.sendResponseHeaders(206, part.length);
      try (OutputStream o = ex.getResponseBody()) {
        o.write(part);
      }
      return;
    }
    ex.sendResponseHeaders(200, data.length);
    try (OutputStream o = ex.getResponseBody()) {
      o.write(data);
    }
  }

  private static void send(HttpExchange ex, int code, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("Content-Type", "application/json");
    ex.sendResponseHeaders(code, b.length);
    try (OutputStream o = ex.getResponseBody()) {
      o.write(b);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
  }
}
