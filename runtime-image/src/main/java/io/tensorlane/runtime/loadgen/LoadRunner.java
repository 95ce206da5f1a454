package io.tensorlane.runtime.loadgen;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Drives one level. Closed loop: {@code concurrency} clients, each sending request i (taken from a shared counter)
 * when its previous one finished. Open loop: arrivals at exponential intervals of mean 1/rate (a Poisson process;
 * rate ∞: all at once), each sent when it arrives, or once a slot is free under {@code max-concurrency}. A level sends
 * {@code num-requests} requests or, with {@code duration}, stops sending new ones after that long (in-flight ones
 * finish); every request is bounded by the timeout, so a level always ends. The multi-turn workload runs
 * {@code concurrency} conversations at a time instead ({@link ConversationRunner}).
 */
public final class LoadRunner {
    /** Sends one request and measures it (never throws for request failures). */
    public interface Sender {
        RequestRecord send(Workload.Prompt prompt, String level, long levelStartNanos);
    }

    /** A finished level: its records (in start order) and wall-clock duration. */
    public record LevelResult(LoadgenConfig.Level level, List<RequestRecord> records, double durationS) {
        public LevelSummary summary() {
            return LevelSummary.of(level, records, durationS);
        }
    }

    private final LoadgenConfig config;
    private final Workload workload;
    private final Sender sender;

    public LoadRunner(LoadgenConfig config, Sender sender) {
        this.config = config;
        this.workload = new Workload(config);
        this.sender = sender;
    }

    /** Sends {@code n} requests one after another (not recorded); returns the first failure, or null. */
    public RequestRecord warmup(int n) {
        for (int i = 0; i < n; i++) {
            RequestRecord r = sender.send(workload.prompt(Integer.MAX_VALUE - i), "warmup", System.nanoTime());
            if (!r.success()) {
                return r;
            }
        }
        return null;
    }

    public LevelResult run(LoadgenConfig.Level level, Consumer<RequestRecord> progress) throws InterruptedException {
        ConcurrentLinkedQueue<RequestRecord> out = new ConcurrentLinkedQueue<>();
        Consumer<RequestRecord> sink = r -> {
            out.add(r);
            if (progress != null) {
                progress.accept(r);
            }
        };
        int limit = config.numRequests() > 0 ? config.numRequests() : Integer.MAX_VALUE;
        long start = System.nanoTime();
        long stopAt = config.duration() == null
                ? Long.MAX_VALUE
                : start + config.duration().toNanos();
        ExecutorService pool;
        if (config.prefix().mode() == PrefixWorkload.Mode.MULTI_TURN) {
            pool = new ConversationRunner(config, workload, sender).start(level, start, stopAt, sink);
        } else if (!level.open()) {
            pool = Executors.newFixedThreadPool(level.concurrency(), daemons("loadgen-client"));
            AtomicInteger next = new AtomicInteger();
            for (int c = 0; c < level.concurrency(); c++) {
                pool.execute(() -> {
                    while (System.nanoTime() < stopAt && !Thread.currentThread().isInterrupted()) {
                        int i = next.getAndIncrement();
                        if (i >= limit) {
                            break;
                        }
                        sink.accept(sender.send(workload.prompt(i), level.label(), start));
                    }
                });
            }
        } else {
            int threads = level.concurrency() > 0 ? level.concurrency() : Math.min(limit, LoadgenConfig.MAX_CLIENTS);
            pool = Executors.newFixedThreadPool(threads, daemons("loadgen-open"));
            SplittableRandom rng = new SplittableRandom(config.seed() ^ Double.doubleToLongBits(level.rate()));
            long arrival = start;
            try {
                for (int i = 0; i < limit; i++) {
                    if (Double.isFinite(level.rate())) {
                        arrival += (long) (-Math.log(1 - rng.nextDouble()) / level.rate() * 1e9);
                        long wait = arrival - System.nanoTime();
                        if (arrival >= stopAt) {
                            break;
                        }
                        if (wait > 0) {
                            TimeUnit.NANOSECONDS.sleep(wait);
                        }
                    } else if (System.nanoTime() >= stopAt) {
                        break;
                    }
                    Workload.Prompt p = workload.prompt(i);
                    pool.execute(() -> {
                        if (System.nanoTime() < stopAt) {
                            sink.accept(sender.send(p, level.label(), start));
                        }
                    });
                }
            } catch (InterruptedException e) {
                pool.shutdownNow();
                throw e;
            }
        }
        pool.shutdown();
        try {
            while (!pool.awaitTermination(1, TimeUnit.SECONDS)) {
                // every request is bounded by its timeout
            }
        } catch (InterruptedException e) {
            pool.shutdownNow();
            throw e;
        }
        double duration = (System.nanoTime() - start) / 1e9;
        List<RequestRecord> records = new ArrayList<>(out);
        records.sort(Comparator.comparingDouble(RequestRecord::startMs));
        return new LevelResult(level, records, duration);
    }

    static ThreadFactory daemons(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
