package io.tensorlane.operator.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.util.List;
import java.util.Objects;

/**
 * The few Hugging Face Hub calls inspection needs, on the JDK's HTTP client: a revision's commit and file list, a small
 * file, and byte ranges (safetensors headers) — never a whole weight file. The token goes in {@code Authorization:
 * Bearer} to the Hub's own host only: redirects are followed by hand and the header is dropped when a redirect leaves
 * that host (the Hub sends large files to a CDN with signed URLs). The token is never part of a message or log line.
 */
public final class HubClient {
  /** Largest small file read whole (config.json). */
  static final int MAX_SMALL_FILE = 4 * 1024 * 1024;
  private static final int MAX_REDIRECTS = 5;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final URI endpoint;
  private final HttpClient http;
  private final Duration timeout;

  /** A revision of a repository: its commit and the files in it. */
  public record Revision(String sha, List<String> files) {
  }

  /**
   * @param endpoint the Hub's base URL (operator configuration; tests point it at a loopback server)
   * @param timeout per request (connect and response)
   */
  public HubClient(URI endpoint, Duration timeout) {
    this.endpoint = URI.create(endpoint.toString().endsWith("/") ? endpoint.toString() : endpoint + "/");
    this.timeout = timeout;
    this.http = HttpClient.newBuilder().connectTimeout(timeout).followRedirects(HttpClient.Redirect.NEVER).build();
  }

  /** GET /api/models/{id}/revision/{rev}: the commit sha and the file names (siblings[].rfilename). */
  public Revision revision(String id, String rev, String token) {
    byte[] body = get("api/models/" + id + "/revision/" + URLEncoder.encode(rev, StandardCharsets.UTF_8), token, null,
        MAX_SMALL_FILE, "revision " + rev + " of " + id);
    JsonNode root;
    try {
      root = MAPPER.readTree(body);
    } catch (IOException e) {
      throw new HubException(HubException.Kind.MALFORMED, "the Hub's answer for " + id + "@" + rev + " is not JSON");
    }
    JsonNode sha = root.get("sha");
    if (sha == null || !sha.isTextual() || sha.asText().isBlank()) {
      throw new HubException(HubException.Kind.MALFORMED, "the Hub's answer for " + id + "@" + rev + " has no sha");
    }
    List<String> files = new ArrayList<>();
    JsonNode siblings = root.get("siblings");
    if (siblings != null && siblings.isArray()) {
      siblings.forEach(s -> {
        JsonNode f = s.get("rfilename");
        if (f != null && f.isTextual()) {
          files.add(f.asText());
        }
      });
    }
    return new Revision(sha.asText(), files);
  }

  /** GET /{id}/resolve/{sha}/{file}, whole (small files only). */
  public byte[] file(String id, String sha, String file, String token) {
    return get(id + "/resolve/" + sha + "/" + file, token, null, MAX_SMALL_FILE, file + " of " + id + "@" + sha);
  }

  /** Bytes [from, to] (inclusive) of a file, through a Range request; reads no more than that even from a server that ignores Range. */
  public byte[] range(String id, String sha, String file, long from, long to, String token) {
    long n = to - from + 1;
    if (n > Integer.MAX_VALUE - 8) {
      throw new HubException(HubException.Kind.MALFORMED, file + ": range of " + n + " bytes is too large");
    }
    byte[] b = get(id + "/resolve/" + sha + "/" + file, token, "bytes=" + from + "-" + to, (int) n,
        file + " of " + id + "@" + sha);
    if (b.length != n) {
      throw new HubException(HubException.Kind.MALFORMED, file + " of " + id + "@" + sha + ": asked for " + n
          + " bytes at " + from + ", got " + b.length + " (file shorter than its header says?)");
    }
    return b;
  }

  private byte[] get(String path, String token, String range, int limit, String what) {
    URI uri = endpoint.resolve(path);
    boolean sameHost = true;
    for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
      HttpRequest.Builder rb = HttpRequest.newBuilder(uri).timeout(timeout).GET();
      if (token != null && !token.isBlank() && sameHost) {
        rb.header("Authorization", "Bearer " + token);
      }
      if (range != null) {
        rb.header("Range", range);
      }
      HttpResponse<InputStream> resp;
      try {
        resp = http.send(rb.build(), HttpResponse.BodyHandlers.ofInputStream());
      } catch (IOException e) {
        throw new HubException(HubException.Kind.UNREACHABLE, "cannot reach the Hub at " + endpoint + " for " + what
            + ": " + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : " " + e.getMessage()));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new HubException(HubException.Kind.UNREACHABLE, "interrupted while reading " + what);
      }
      int code = resp.statusCode();
      try (InputStream body = resp.body()) {
        if (code >= 300 && code < 400 && resp.headers().firstValue("Location").isPresent()) {
          URI next = uri.resolve(resp.headers().firstValue("Location").get());
          sameHost = sameHost && Objects.equals(next.getHost(), endpoint.getHost())
              && next.getPort() == endpoint.getPort() && Objects.equals(next.getScheme(), endpoint.getScheme());
          uri = next;
          continue;
        }
        if (code == 200 || code == 206) {
          byte[] b = body.readNBytes(limit + (range == null ? 1 : 0));
          if (range == null && b.length > limit) {
            throw new HubException(HubException.Kind.MALFORMED, what + " is larger than " + limit + " bytes");
          }
          return b;
        }
        throw switch (code) {
          case 401, 403 -> new HubException(HubException.Kind.UNAUTHORIZED, "the Hub answered " + code + " for " + what
              + (token == null ? ": the model is gated or private (or does not exist); set spec.model.tokenSecret"
                  : ": the token in spec.model.tokenSecret is not accepted for this model"));
          case 404 -> new HubException(HubException.Kind.NOT_FOUND, "the Hub answered 404 for " + what
              + ": no such model, revision or file");
          default -> new HubException(code >= 500 || code == 429 ? HubException.Kind.UNREACHABLE
              : HubException.Kind.MALFORMED, "the Hub answered " + code + " for " + what);
        };
      } catch (IOException e) {
        throw new HubException(HubException.Kind.UNREACHABLE, "reading " + what + " failed: " + e.getClass().getSimpleName());
      }
    }
    throw new HubException(HubException.Kind.MALFORMED, "more than " + MAX_REDIRECTS + " redirects for " + what);
  }
}
