package io.tensorlane.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SpinHandoffTest {
    private static ExecutorService worker(long spinNanos) {
        return SpinHandoff.singleThread(
                r -> {
                    Thread t = new Thread(r, "spin-test");
                    t.setDaemon(true);
                    return t;
                },
                spinNanos);
    }

    @Test
    void tasksRunInOrderOnOneThreadWhetherTheyArriveWhileItSpinsOrAfterItParked() throws Exception {
        ExecutorService w = worker(TimeUnit.MILLISECONDS.toNanos(1));
        try {
            List<String> seen = new ArrayList<>();
            String first = SpinHandoff.get(w.submit(() -> Thread.currentThread().getName()), 0);
            seen.add(SpinHandoff.get(w.submit(() -> "spinning"), TimeUnit.MILLISECONDS.toNanos(50)));
            Thread.sleep(50); // past the spin window: the worker blocks in the queue's take
            seen.add(SpinHandoff.get(w.submit(() -> "parked"), TimeUnit.MILLISECONDS.toNanos(50)));
            String last = SpinHandoff.get(w.submit(() -> Thread.currentThread().getName()), 0);

            assertThat(seen).containsExactly("spinning", "parked");
            assertThat(first).isEqualTo("spin-test").isEqualTo(last);
        } finally {
            w.shutdownNow();
        }
    }

    @Test
    void aFailureReachesTheCallerAsTheExecutionExceptionOfGet() {
        ExecutorService w = worker(TimeUnit.MILLISECONDS.toNanos(1));
        try {
            Future<Object> f = w.submit(() -> {
                throw new IllegalStateException("rank failed");
            });
            assertThatThrownBy(() -> SpinHandoff.get(f, TimeUnit.MILLISECONDS.toNanos(10)))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(IllegalStateException.class)
                    .hasRootCauseMessage("rank failed");
        } finally {
            w.shutdownNow();
        }
    }

    @Test
    void aCallerWhoseSpinRunsOutStillGetsTheResult() throws Exception {
        ExecutorService w = worker(0);
        CountDownLatch release = new CountDownLatch(1);
        try {
            Future<String> f = w.submit(() -> {
                release.await();
                return "late";
            });
            Thread t = new Thread(() -> {
                try {
                    Thread.sleep(30);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                release.countDown();
            });
            t.start();
            assertThat(SpinHandoff.get(f, TimeUnit.MILLISECONDS.toNanos(1))).isEqualTo("late");
        } finally {
            w.shutdownNow();
        }
    }

    @Test
    void shutdownNowEndsAWorkerThatIsSpinning() throws Exception {
        ExecutorService w = worker(TimeUnit.SECONDS.toNanos(30));
        SpinHandoff.get(w.submit(() -> null), 0); // the thread now spins for its next task
        w.shutdownNow();
        assertThat(w.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    }
}
