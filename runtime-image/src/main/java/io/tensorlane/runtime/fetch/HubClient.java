package io.tensorlane.runtime.fetch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.runtime.fetch.FetchFailure.Kind;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The two Hub endpoints fetch-model uses, over {@link HttpClient}: {@code GET /api/models/{id}/revision/{rev}} (the
 * commit and the file list) and {@code GET /{id}/resolve/{commit}/{file}} (a file, usually a redirect to a CDN). The
 * token goes only to the endpoint's own origin, never to a host a redirect points at, and never into a message.
 * Each call is one attempt: HTTP failures become {@link FetchFailure}s (retryable for 5xx, 408 and 429), connection
 * errors stay {@link IOException}s; the caller retries.
 */
final class HubClient {
  static final int MAX_REDIRECTS = 10;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The commit a revision resolved to and its files (with sizes where the Hub gave them). */
  record Snapshot(String sha, List<String> files, Map<String, Long> sizes) {}

  private final URI endpoint;
  /** The endpoint as messages show it (no user info, no query). */
  private final String shown;
  private final String token;
  private final HttpClient http;
  private final Duration timeout;

  HubClient(URI endpoint, String token, Duration timeout) {
    this.endpoint = endpoint;
    this.shown = endpoint.getScheme() + "://" + endpoint.getHost() + (endpoint.getPort() == -1 ? "" : ":" + endpoint.getPort())
        + (endpoint.getRawPath() == null ? "" : endpoint.getRawPath());
    this.token = token == null || token.isBlank() ? null : token.trim();
    this.timeout = timeout;
    // HTTP/1.1: one long stream per file (HTTP/2 flow-control windows slow a single multi-GB stream); redirects by hand
    this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).followRedirects(HttpClient.Redirect.NEVER)
        .connectTimeout(timeout).build();
  }

  /** The endpoint as messages show it. */
  String shown() {
    return shown;
  }

  /** One attempt at the revision API; {@link FetchFailure} with the kind to act on (IO kinds may be retried). */
  Snapshot revision(HubSource src) throws FetchFailure, IOException, InterruptedException {
    URI uri = URI.create(base() + "/api/models/" + src.id() + "/revision/" + HubSource.segment(src.revision()) + "?blobs=true");
    HttpResponse<InputStream> r = send(uri, null);
    try (InputStream body = r.body()) {
      if (r.statusCode() != 200) {
        throw failure(r, "model " + src.id() + " (revision '" + src.revision() + "')");
      }
      JsonNode root;
      try {
        root = JSON.readTree(body);
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        throw new FetchFailure(Kind.IO, "the model API at " + shown + " answered with something that is not JSON for "
            + src.id() + " (is --endpoint a Hugging Face Hub?)");
      }
      String sha = root == null ? null : root.path("sha").asText(null);
      JsonNode siblings = root == null ? null : root.get("siblings");
      if (sha == null || sha.isBlank() || siblings == null || !siblings.isArray()) {
        throw new FetchFailure(Kind.IO, "the model API at " + shown + " answered for " + src.id()
            + " without \"sha\" and \"siblings\" (is --endpoint a Hugging Face Hub?)");
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
      return new Snapshot(sha, files, sizes);
    }
  }

  /** The request for a file; the caller reads the body (200 whole, 206 from {@code from}). Redirects are followed. */
  HttpResponse<InputStream> file(String id, String sha, String file, long from) throws IOException, InterruptedException {
    URI uri = URI.create(base() + "/" + id + "/resolve/" + HubSource.segment(sha) + "/" + HubSource.path(file));
    return send(uri, from > 0 ? "bytes=" + from + "-" : null);
  }

  private String base() {
    String s = endpoint.toString();
    return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
  }

  private HttpResponse<InputStream> send(URI start, String range) throws IOException, InterruptedException {
    URI uri = start;
    for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
      HttpRequest.Builder b = HttpRequest.newBuilder(uri).GET().timeout(timeout).header("User-Agent", "tensorlane-runtime");
      if (token != null && sameOrigin(uri, endpoint)) {
        b.header("Authorization", "Bearer " + token);
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
    throw new IOException("more than " + MAX_REDIRECTS + " redirects from " + start.getPath());
  }

  static boolean isRedirect(int status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
  }

  static boolean sameOrigin(URI a, URI b) {
    return Objects.equals(a.getScheme(), b.getScheme()) && a.getHost() != null && a.getHost().equalsIgnoreCase(b.getHost())
        && port(a) == port(b);
  }

  private static int port(URI u) {
    return u.getPort() != -1 ? u.getPort() : "https".equalsIgnoreCase(u.getScheme()) ? 443 : 80;
  }

  /** A failure for an HTTP status other than success; {@code what} names the thing asked for. */
  FetchFailure failure(HttpResponse<?> r, String what) {
    int status = r.statusCode();
    String code = r.headers().firstValue("X-Error-Code").orElse("");
    if (status == 401 || status == 403) {
      String why = token == null ? "no token was given: set the model's token Secret (a Hugging Face token; this step "
          + "reads it as HF_TOKEN)" : "the token in HF_TOKEN was refused: check the model's token Secret (a valid token "
          + "with access to this model; gated models need their terms accepted)";
      String notFound = "RepoNotFound".equals(code) ? " (the Hub says the repository does not exist or is private)" : "";
      return new FetchFailure(Kind.UNAUTHORIZED, "not allowed to read " + what + " from " + shown + ": HTTP " + status
          + notFound + "; " + why);
    }
    if (status == 404) {
      String which = switch (code) {
        case "RevisionNotFound" -> "the revision does not exist";
        case "RepoNotFound" -> "the model does not exist";
        case "EntryNotFound" -> "the file does not exist at that commit";
        default -> "not found";
      };
      return new FetchFailure(Kind.NOT_FOUND, what + " at " + shown + ": HTTP 404, " + which);
    }
    return new FetchFailure(Kind.IO, what + " at " + shown + ": HTTP " + status, retryable(status));
  }

  /** Whether a failed status is worth another attempt (server errors, rate limits, timeouts). */
  static boolean retryable(int status) {
    return status >= 500 || status == 429 || status == 408;
  }
}
