package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.HostTensors;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The host side of selftest's push-variant check: its inputs, its run of counts and its comparison. */
class SelftestPushTest {
    @Test
    void negativeZerosOnEveryRankInSomeColumnsAndOnRankZeroInMore() {
        byte[] r0 = SelftestPush.withNegativeZeros(HostTensors.random(DType.bf16, 100, 1), 0);
        byte[] r1 = SelftestPush.withNegativeZeros(HostTensors.random(DType.bf16, 100, 2), 1);
        assertThat(element(r0, 3)).isEqualTo(0x8000);
        assertThat(element(r1, 3)).isEqualTo(0x8000);
        assertThat(element(r0, 8)).isEqualTo(0x8000);
        assertThat(element(r1, 8)).isNotEqualTo(0x8000);
        long zeros1 = java.util.stream.IntStream.range(0, 100)
                .filter(i -> element(r1, i) == 0x8000)
                .count();
        assertThat(zeros1).isEqualTo(10);
    }

    @Test
    void countsAreWholePacksUpToTheLargestTheVariantTakes() {
        assertThat(SelftestPush.counts(131_072))
                .containsExactly(8L, 4096L, 520L, 21_504L, 8L, 65_536L, 4104L, 131_072L, 131_072L);
        assertThat(SelftestPush.counts(4096)).containsExactly(8L, 4096L, 520L, 8L, 4096L);
        assertThat(SelftestPush.counts(131_072))
                .allSatisfy(c -> assertThat(c % 8).isZero());
    }

    @Test
    void zerosOfEitherSignCompareEqualAndNothingElseDoes() {
        byte[] a = {0x00, (byte) 0x80, 0x12, 0x34, 0x00, 0x00};
        byte[] b = {0x00, 0x00, 0x12, 0x34, 0x00, (byte) 0x80};
        assertThat(SelftestPush.sameUpToZeroSign(a, b, 3)).isTrue();
        byte[] c = {0x00, 0x00, 0x13, 0x34, 0x00, 0x00};
        assertThat(SelftestPush.sameUpToZeroSign(a, c, 3)).isFalse();
        assertThat(SelftestPush.sameUpToZeroSign(a, c, 1)).isTrue();
        byte[] d = {0x01, (byte) 0x80};
        assertThat(SelftestPush.sameUpToZeroSign(d, new byte[] {0x00, 0x00}, 1)).isFalse();
    }

    @Test
    void aCheckFailsWhenTheKernelItMeantToRunDidNot() {
        SelftestRunner.Result ok =
                SelftestRunner.Result.of(2, "bf16", "OneStage-push", "eager x9", 8, 1e-3, 1e-2, 0, true, true);
        assertThat(ok.ok()).isTrue();
        assertThat(ok.withPushCalls(List.of(5L, 5L), List.of(14L, 14L), 9)).isSameAs(ok);
        SelftestRunner.Result pulled = ok.withPushCalls(List.of(5L, 5L), List.of(5L, 14L), 9);
        assertThat(pulled.ok()).isFalse();
        assertThat(pulled.mode()).isEqualTo("eager x9 (rank 0: 0 push calls, expected 9)");
        assertThat(pulled.bitwiseEqual()).isTrue();
        assertThat(ok.withPushCalls(List.of(0L), List.of(1L), 0).ok()).isFalse();
    }

    private static int element(byte[] raw, int i) {
        return (raw[2 * i] & 0xFF) | (raw[2 * i + 1] & 0xFF) << 8;
    }
}
