package io.tensorlane.runtime.fetch;

import io.tensorlane.modelfacts.HubClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One attempt at one file: continues {@code <file>.part} with a Range request when it exists (206 appends; a 200 that
 * ignored the Range starts over), streams the body to disk through a 1 MiB buffer (nothing of the file in the heap),
 * and ends a transfer that sends nothing for the stall timeout. Returns the size of the part file when the body was
 * whole; a cut connection is an {@link IOException} (the caller retries, resuming where the part file ends).
 */
final class FileDownload implements AutoCloseable {
    private static final int BUFFER = 1 << 20;
    private static final Pattern CONTENT_RANGE = Pattern.compile("bytes\\s+(\\d+)-(\\d+)/(\\d+|\\*)");
    private static final Pattern UNSATISFIED = Pattern.compile("bytes\\s+\\*/(\\d+)");

    private final HubClient hub;
    private final String token;
    private final Progress progress;
    private final PrintWriter log;
    private final Duration stallTimeout;
    private final ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "fetch-model-stall-watchdog");
        t.setDaemon(true);
        return t;
    });

    FileDownload(HubClient hub, String token, Progress progress, PrintWriter log, Duration stallTimeout) {
        this.hub = hub;
        this.token = token;
        this.progress = progress;
        this.log = log;
        this.stallTimeout = stallTimeout;
    }

    /** One attempt; {@code expected} is the size the Hub listed, or -1. */
    long attempt(String id, String sha, String file, Path part, long expected)
            throws FetchFailure, IOException, InterruptedException {
        long have = Files.exists(part) ? Files.size(part) : 0;
        if (expected >= 0 && have > expected) {
            Files.delete(part);
            progress.restart(have);
            have = 0;
        }
        if (expected > 0 && have == expected) {
            return have;
        }
        HttpResponse<InputStream> r = hub.file(id, sha, file, have > 0 ? "bytes=" + have + "-" : null, token);
        try (InputStream in = r.body()) {
            int status = r.statusCode();
            String range = r.headers().firstValue("Content-Range").orElse("");
            long total;
            boolean append;
            if (status == 206) {
                Matcher m = CONTENT_RANGE.matcher(range);
                if (!m.matches() || Long.parseLong(m.group(1)) != have) {
                    throw new IOException(
                            file + ": asked to resume at byte " + have + ", the server sent '" + range + "'");
                }
                total = m.group(3).equals("*") ? -1 : Long.parseLong(m.group(3));
                append = true;
            } else if (status == 200) {
                if (have > 0) {
                    log.printf(
                            "fetch-model: %s: the server ignored the Range request, downloading it from the start%n",
                            file);
                    progress.restart(have);
                    have = 0;
                }
                total = r.headers().firstValueAsLong("Content-Length").orElse(-1);
                append = false;
            } else if (status == 416) {
                Matcher m = UNSATISFIED.matcher(range);
                if (m.matches() && Long.parseLong(m.group(1)) == have) {
                    return have;
                }
                Files.deleteIfExists(part);
                progress.restart(have);
                throw new IOException(file + ": the server cannot resume at byte " + have + " (416); starting over");
            } else {
                throw FetchFailure.of(hub.failure(r, HubClient.what(id, sha, file), token));
            }
            long size = copy(in, part, append, have);
            if (total >= 0 && size != total) {
                throw new IOException(file + ": the transfer ended at byte " + size + " of " + total);
            }
            return size;
        }
    }

    private long copy(InputStream in, Path part, boolean append, long have) throws IOException {
        AtomicBoolean stalled = new AtomicBoolean();
        long period = Math.max(10, stallTimeout.toMillis() / 4);
        ScheduledFuture<?> check = watchdog.scheduleAtFixedRate(
                () -> {
                    if (progress.idleNanos() > stallTimeout.toNanos() && stalled.compareAndSet(false, true)) {
                        try {
                            in.close();
                        } catch (IOException ignored) {
                            // the reading thread sees the closed stream
                        }
                    }
                },
                period,
                period,
                TimeUnit.MILLISECONDS);
        StandardOpenOption mode = append ? StandardOpenOption.APPEND : StandardOpenOption.TRUNCATE_EXISTING;
        try (FileChannel ch = FileChannel.open(part, StandardOpenOption.CREATE, StandardOpenOption.WRITE, mode)) {
            byte[] buf = new byte[BUFFER];
            long size = append ? have : 0;
            progress.touch();
            for (int n; (n = in.read(buf)) >= 0; ) {
                ByteBuffer bb = ByteBuffer.wrap(buf, 0, n);
                while (bb.hasRemaining()) {
                    ch.write(bb);
                }
                size += n;
                progress.add(n);
            }
            ch.force(true);
            return size;
        } catch (IOException e) {
            if (stalled.get()) {
                throw new IOException("no data for " + stallTimeout.toSeconds() + " s", e);
            }
            throw e;
        } finally {
            check.cancel(false);
        }
    }

    @Override
    public void close() {
        watchdog.shutdownNow();
    }
}
