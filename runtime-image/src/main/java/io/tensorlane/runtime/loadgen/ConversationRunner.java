package io.tensorlane.runtime.loadgen;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The multi-turn workload of one level: {@code concurrency} clients, each running the next conversation (taken from a
 * shared counter, {@code num-requests} of them) turn by turn: turn {@code t} sends the system prompt, the questions and
 * the server's answers of turns {@code 0..t-1} and a new question, as a chat client does. A failed turn ends its
 * conversation. Every turn is one record (index conversation × turns + turn); with {@code duration}, no new
 * conversation starts after it (running ones finish).
 */
final class ConversationRunner {
    private final LoadgenConfig config;
    private final Workload workload;
    private final LoadRunner.Sender sender;

    ConversationRunner(LoadgenConfig config, Workload workload, LoadRunner.Sender sender) {
        this.config = config;
        this.workload = workload;
        this.sender = sender;
    }

    /** Starts the level's conversations (every finished turn goes to {@code sink}); the caller awaits the pool. */
    ExecutorService start(LoadgenConfig.Level level, long start, long stopAt, Consumer<RequestRecord> sink) {
        ExecutorService pool =
                Executors.newFixedThreadPool(level.concurrency(), LoadRunner.daemons("loadgen-conversation"));
        AtomicInteger next = new AtomicInteger();
        for (int c = 0; c < level.concurrency(); c++) {
            pool.execute(() -> {
                int conv;
                while (System.nanoTime() < stopAt
                        && !Thread.currentThread().isInterrupted()
                        && (conv = next.getAndIncrement()) < config.numRequests()) {
                    converse(conv, level.label(), start, sink);
                }
            });
        }
        return pool;
    }

    /** One conversation: its turns in order, each with the history so far. */
    void converse(int conversation, String level, long start, Consumer<RequestRecord> sink) {
        List<String> history = new ArrayList<>();
        for (int t = 0; t < config.prefix().turns(); t++) {
            Workload.Prompt p = workload.turn(conversation, t, history);
            RequestRecord r = sender.send(p, level, start);
            sink.accept(r);
            if (!r.success()) {
                return;
            }
            history.add(p.text());
            history.add(r.text() == null ? "" : r.text().strip());
        }
    }
}
