package io.tensorlane.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class LaunchFenceTest {
    @Test
    void noRankLeavesBeforeEveryRankHasLaunched() throws Exception {
        int parties = 4;
        LaunchFence fence = new LaunchFence(parties, 10_000);
        AtomicInteger launched = new AtomicInteger();
        List<Integer> seenOnLeaving = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(parties);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int r = 0; r < parties; r++) {
                int rank = r;
                fs.add(pool.submit(() -> {
                    for (int call = 1; call <= 3; call++) {
                        sleepMillis(rank * 5L); // ranks arrive at different times
                        fence.around(launched::incrementAndGet);
                        seenOnLeaving.add(launched.get());
                    }
                }));
            }
            for (Future<?> f : fs) {
                f.get(10, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        // call k: every rank leaves after all k * parties launches of calls 1..k happened
        assertThat(seenOnLeaving).hasSize(3 * parties);
        assertThat(seenOnLeaving.subList(0, parties))
                .allSatisfy(n -> assertThat(n).isBetween(parties, 2 * parties));
        assertThat(launched.get()).isEqualTo(3 * parties);
    }

    @Test
    void aPeerThatNeverArrivesEndsInATimeoutNamingTheCause() {
        LaunchFence fence = new LaunchFence(2, 200);
        assertThatThrownBy(() -> fence.around(() -> {}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("did not reach the allreduce launch within 200 ms");
    }

    @Test
    void breakAllReleasesWaitersWithAnErrorAndTheFenceIsReusable() throws Exception {
        LaunchFence fence = new LaunchFence(2, 30_000);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<?> waiter = pool.submit(() -> fence.around(() -> {}));
            sleepMillis(200);
            fence.breakAll();
            assertThatThrownBy(() -> waiter.get(5, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasRootCauseInstanceOf(java.util.concurrent.BrokenBarrierException.class)
                    .hasMessageContaining("a peer rank failed");
            Future<?> again = pool.submit(() -> fence.around(() -> {}));
            fence.around(() -> {});
            again.get(5, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
    }

    private static void sleepMillis(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
