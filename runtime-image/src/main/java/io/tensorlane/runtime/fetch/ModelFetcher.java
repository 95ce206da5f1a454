package io.tensorlane.runtime.fetch;

import io.tensorlane.modelfacts.HubClient;
import io.tensorlane.modelfacts.HubException;
import io.tensorlane.runtime.fetch.FetchFailure.Kind;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Downloads a Hub model into a directory: resolves the revision to a commit (pinned from then on), picks the files,
 * resumes what an earlier run left, verifies, and writes {@link ModelMarker#NAME}. A directory whose marker matches
 * the model, the commit and the files' sizes is left as it is (an init container that restarts returns at once).
 */
public final class ModelFetcher {
    /**
     * @param source      what to fetch
     * @param sourceText  the source as given (recorded in the marker)
     * @param dest        the model directory
     * @param endpoint    the Hub
     * @param token       HF token or null
     * @param files       which files
     * @param retries     further attempts after a server error or a broken connection
     * @param backoff     the first wait between attempts (doubling, at most a minute)
     * @param timeout     connect and response-header timeout
     * @param stall       a transfer that sends nothing this long is cut and retried
     * @param progressInterval how often progress is printed
     */
    public record Options(
            HubSource source,
            String sourceText,
            Path dest,
            URI endpoint,
            String token,
            FileSelection files,
            int retries,
            Duration backoff,
            Duration timeout,
            Duration stall,
            Duration progressInterval) {}

    /** What a 401/403 tells the user: this step reads the token Secret as HF_TOKEN. */
    static final HubClient.TokenHint TOKEN_HINT = new HubClient.TokenHint(
            "no token was given: set the model's token "
                    + "Secret (a Hugging Face token; this step reads it as HF_TOKEN)",
            "the token in HF_TOKEN was refused: check the "
                    + "model's token Secret (a valid token with access to this model; gated models need their terms accepted)");

    private interface Attempt<T> {
        T run() throws FetchFailure, IOException, InterruptedException;
    }

    private final Options o;
    private final PrintWriter out;
    private final HubClient hub;
    private final Progress progress;

    public ModelFetcher(Options o, PrintWriter out) {
        this.o = o;
        this.out = out;
        this.hub = new HubClient(o.endpoint(), o.timeout(), "tensorlane-runtime", TOKEN_HINT);
        this.progress = new Progress(out, o.progressInterval().toNanos(), System::nanoTime);
    }

    /** Fetches and verifies; returns the marker written (or found). */
    public ModelMarker run() throws FetchFailure, InterruptedException {
        HubSource src = o.source();
        Path dest = o.dest();
        try {
            Files.createDirectories(dest);
        } catch (IOException e) {
            throw new FetchFailure(Kind.IO, "cannot create " + dest + ": " + e.getMessage());
        }
        Path markerFile = dest.resolve(ModelMarker.NAME);
        Optional<ModelMarker> done = ModelMarker.read(markerFile);
        if (src.pinned() && done.isPresent() && done.get().matches(src.id(), src.revision(), dest)) {
            return complete(done.get());
        }
        out.printf("fetch-model: %s from %s%s%n", src, hub.shown(), o.token() == null ? "" : " (with a token)");
        out.flush();
        HubClient.Revision snap =
                withRetries("the revision of " + src.id(), () -> hub.revision(src.id(), src.revision(), o.token()));
        if (done.isPresent() && done.get().matches(src.id(), snap.sha(), dest)) {
            return complete(done.get());
        }
        List<String> files = o.files().select(snap.files());
        check(src, snap, files);
        out.printf(
                "fetch-model: %s resolved to commit %s; %d file(s): %s%n",
                src.revision(), snap.sha(), files.size(), files);
        ModelMarker state = resume(dest, o.sourceText(), src, snap.sha(), files, done);
        long total = 0;
        long already = 0;
        int complete = 0;
        for (String f : files) {
            total += snap.sizes().getOrDefault(f, 0L);
            already += onDisk(dest, f, state);
            complete += isComplete(dest, f, state, snap.sizes().getOrDefault(f, -1L)) ? 1 : 0;
        }
        progress.plan(total, already, src.id() + "@" + snap.sha(), files.size(), complete);
        try (FileDownload dl = new FileDownload(hub, o.token(), progress, out, o.stall())) {
            for (String f : files) {
                Path target = dest.resolve(f);
                long expected = snap.sizes().getOrDefault(f, -1L);
                if (isComplete(dest, f, state, expected)) {
                    continue;
                }
                Path part = dest.resolve(f + ModelMarker.PART);
                Files.createDirectories(part.getParent());
                progress.start(f, expected, Files.exists(part) ? size(part) : 0);
                long size = withRetries(f, () -> dl.attempt(src.id(), snap.sha(), f, part, expected));
                if (expected >= 0 && size != expected) {
                    throw new FetchFailure(
                            Kind.VERIFICATION,
                            "verification failed: " + f + " is " + size + " bytes, the Hub lists " + expected);
                }
                Files.move(part, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                progress.finish(size);
                state = state.with(new ModelMarker.FileEntry(f, size));
                state.write(dest.resolve(ModelMarker.IN_PROGRESS));
            }
            Verifier.verify(dest, files);
            ModelMarker marker = new ModelMarker(
                    o.sourceText(),
                    src.id(),
                    snap.sha(),
                    state.files(),
                    Instant.now().toString());
            marker.write(markerFile);
            Files.deleteIfExists(dest.resolve(ModelMarker.IN_PROGRESS));
            progress.complete();
            out.printf(
                    "fetch-model: complete: %s at %s, %d file(s), %s%n",
                    src.id(), snap.sha(), files.size(), progress.summary());
            out.flush();
            return marker;
        } catch (IOException e) {
            throw new FetchFailure(Kind.IO, "cannot write to " + dest + ": " + e.getMessage());
        }
    }

    private ModelMarker complete(ModelMarker m) {
        out.printf(
                "fetch-model: %s at %s is already complete in %s (%d files)%n",
                m.id(), m.revision(), o.dest(), m.files().size());
        out.flush();
        progress.alreadyComplete(
                m.id() + "@" + m.revision(),
                m.files().stream().mapToLong(ModelMarker.FileEntry::size).sum(),
                m.files().size());
        return m;
    }

    /** The file is complete on disk: recorded with its size, and that size is the Hub's (when the Hub lists one). */
    private static boolean isComplete(Path dest, String f, ModelMarker state, long expected) {
        Optional<ModelMarker.FileEntry> have = state.file(f);
        Path target = dest.resolve(f);
        return have.isPresent()
                && Files.isRegularFile(target)
                && size(target) == have.get().size()
                && (expected < 0 || expected == have.get().size());
    }

    private void check(HubSource src, HubClient.Revision snap, List<String> files) throws FetchFailure {
        for (String f : files) {
            Path p = o.dest().resolve(f).normalize();
            if (f.startsWith("/")
                    || f.contains("\\")
                    || !p.startsWith(o.dest().normalize())
                    || f.endsWith(ModelMarker.PART)) {
                throw new FetchFailure(Kind.IO, "the Hub lists a file name that is not safe to write: '" + f + "'");
            }
        }
        String where = src.id() + " at commit " + snap.sha();
        if (files.isEmpty()) {
            throw new FetchFailure(
                    Kind.NOT_FOUND, where + " has no file matching " + o.files().globs());
        }
        if (o.files().isDefault() && !files.contains("config.json")) {
            throw new FetchFailure(Kind.NOT_FOUND, where + " has no config.json (not a transformers model?)");
        }
        if (o.files().isDefault() && files.stream().noneMatch(f -> f.endsWith(".safetensors"))) {
            throw new FetchFailure(
                    Kind.NOT_FOUND, where + " has no *.safetensors file (only safetensors weights are supported)");
        }
    }

    /**
     * The in-progress record for this commit: kept when an earlier run of the same model and commit left it (its part
     * files resume), else started from the files of a completed marker of the same commit (those whose sizes still match
     * are kept), else empty; in the last two cases the selected files' parts are removed (they may be of another commit).
     */
    private static ModelMarker resume(
            Path dest, String sourceText, HubSource src, String sha, List<String> files, Optional<ModelMarker> done)
            throws FetchFailure {
        Path rec = dest.resolve(ModelMarker.IN_PROGRESS);
        try {
            Optional<ModelMarker> prev = ModelMarker.read(rec);
            Files.deleteIfExists(dest.resolve(ModelMarker.NAME));
            if (prev.isPresent()
                    && prev.get().id().equals(src.id())
                    && prev.get().revision().equals(sha)) {
                return prev.get();
            }
            for (String f : files) {
                Files.deleteIfExists(dest.resolve(f + ModelMarker.PART));
            }
            boolean same = done.isPresent()
                    && done.get().id().equals(src.id())
                    && done.get().revision().equals(sha);
            ModelMarker fresh =
                    new ModelMarker(sourceText, src.id(), sha, same ? done.get().files() : List.of(), null);
            fresh.write(rec);
            return fresh;
        } catch (IOException e) {
            throw new FetchFailure(Kind.IO, "cannot write to " + dest + ": " + e.getMessage());
        }
    }

    private static long onDisk(Path dest, String f, ModelMarker state) {
        Path part = dest.resolve(f + ModelMarker.PART);
        if (Files.exists(part)) {
            return size(part);
        }
        Optional<ModelMarker.FileEntry> e = state.file(f);
        return e.isPresent() && size(dest.resolve(f)) == e.get().size()
                ? e.get().size()
                : 0;
    }

    private static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            return -1;
        }
    }

    private <T> T withRetries(String what, Attempt<T> attempt) throws FetchFailure, InterruptedException {
        for (int i = 0; ; i++) {
            String why;
            try {
                try {
                    return attempt.run();
                } catch (HubException h) {
                    throw FetchFailure.of(h);
                }
            } catch (FetchFailure f) {
                if (!f.retryable() || i >= o.retries()) {
                    throw i > 0 && f.retryable()
                            ? new FetchFailure(f.kind(), f.getMessage() + " (after " + i + " retries)")
                            : f;
                }
                why = f.getMessage();
            } catch (IOException e) {
                why = what + ": " + describe(e, hub.shown());
                if (i >= o.retries()) {
                    throw new FetchFailure(
                            Kind.IO, "network error: " + why + (i > 0 ? " (after " + i + " retries)" : ""));
                }
            }
            long wait = Math.min(60_000, o.backoff().toMillis() << Math.min(i, 16));
            out.printf("fetch-model: %s; retry %d of %d in %.1f s%n", why, i + 1, o.retries(), wait / 1000.0);
            out.flush();
            Thread.sleep(wait);
        }
    }

    private static String describe(IOException e, String endpoint) {
        if (e instanceof java.net.ConnectException) {
            return "cannot connect to " + endpoint + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")");
        }
        if (e instanceof java.net.http.HttpTimeoutException) {
            return "timed out (" + e.getMessage() + ")";
        }
        String m = e.getMessage();
        String cause = e.getCause() != null && e.getCause().getMessage() != null
                ? " (" + e.getCause().getMessage() + ")"
                : "";
        return (m == null || m.isBlank() ? e.getClass().getSimpleName() : m) + cause;
    }
}
