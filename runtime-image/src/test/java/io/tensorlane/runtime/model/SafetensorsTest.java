package io.tensorlane.runtime.model;

import static io.tensorlane.runtime.model.SafetensorsWriter.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.model.SafetensorsWriter.T;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SafetensorsTest {
    @TempDir
    Path dir;

    @Test
    void parsesHeaderWithAbsoluteOffsets() {
        Path f = SafetensorsWriter.write(
                dir.resolve("model.safetensors"),
                List.of(
                        new T("a", "BF16", new long[] {3, 4}, bytes(24, 1)),
                                new T("b", "F32", new long[] {5}, bytes(20, 2)),
                        new T("scalar", "I64", new long[] {}, bytes(8, 3)),
                                new T("empty", "F16", new long[] {0, 7}, new byte[0])));
        SafetensorsFile s = SafetensorsFile.read(f);
        assertThat(s.tensors().keySet()).containsExactly("a", "b", "scalar", "empty");
        assertThat(s.dataStart() % 8).isZero();
        TensorInfo a = s.tensors().get("a");
        assertThat(a.dtype()).isEqualTo(SafeDType.BF16);
        assertThat(a.shape()).containsExactly(3, 4);
        assertThat(a.rows()).isEqualTo(3);
        assertThat(a.cols()).isEqualTo(4);
        assertThat(a.offset()).isEqualTo(s.dataStart());
        assertThat(a.byteLength()).isEqualTo(24);
        TensorInfo b = s.tensors().get("b");
        assertThat(b.offset()).isEqualTo(s.dataStart() + 24);
        assertThat(b.rows()).isEqualTo(5);
        assertThat(b.cols()).isEqualTo(1);
        assertThat(s.tensors().get("scalar").elements()).isEqualTo(1);
        assertThatThrownBy(() -> s.tensors().get("scalar").rows())
                .isInstanceOf(ModelException.class)
                .hasMessageContaining("tensor scalar")
                .hasMessageContaining("expected a 1-D or 2-D tensor");
        assertThat(a).isEqualTo(SafetensorsFile.read(f).tensors().get("a"));
    }

    @Test
    void checkpointFromSingleFileMapsTheRightBytes() throws IOException {
        SafetensorsWriter.write(
                dir.resolve("model.safetensors"),
                List.of(
                        new T("x", "F16", new long[] {2, 3}, bytes(12, 7)),
                        new T("y", "U8", new long[] {10}, bytes(10, 9))));
        Files.writeString(dir.resolve("config.json"), "{}");
        try (Checkpoint ck = Checkpoint.open(dir)) {
            assertThat(ck.tensors()).extracting(TensorInfo::name).containsExactly("x", "y");
            assertThat(ck.totalBytes()).isEqualTo(22);
            TensorInfo y = ck.require("y");
            ByteBuffer all = ck.map(y);
            assertThat(all.isReadOnly()).isTrue();
            assertThat(all.order()).isEqualTo(ByteOrder.LITTLE_ENDIAN);
            assertThat(all.remaining()).isEqualTo(10);
            byte[] got = new byte[10];
            all.get(got);
            assertThat(got).isEqualTo(bytes(10, 9));
            ByteBuffer part = ck.map(ck.require("x"), 4, 6);
            byte[] want = new byte[6];
            System.arraycopy(bytes(12, 7), 4, want, 0, 6);
            byte[] gotPart = new byte[6];
            part.get(gotPart);
            assertThat(gotPart).isEqualTo(want);
            assertThat(ck.map(ck.require("x"), 0, 2).getShort(0))
                    .isEqualTo((short) (bytes(12, 7)[0] & 0xFF | bytes(12, 7)[1] << 8));
            assertThat(ck.find("z")).isEmpty();
            assertThatThrownBy(() -> ck.require("z"))
                    .isInstanceOf(ModelException.class)
                    .hasMessageContaining("has no tensor z");
            assertThatThrownBy(() -> ck.map(y, 5, 6))
                    .isInstanceOf(ModelException.class)
                    .hasMessageContaining("tensor y: byte range [5, +6) is outside its 10 bytes");
            assertThatThrownBy(() -> ck.map(y, -1, 1)).isInstanceOf(ModelException.class);
        }
    }

    @Test
    void checkpointFromShardedIndex() throws IOException {
        SafetensorsWriter.write(
                dir.resolve("model-00001-of-00002.safetensors"),
                List.of(
                        new T("a", "BF16", new long[] {4}, bytes(8, 1)),
                        new T("b", "BF16", new long[] {2}, bytes(4, 2))));
        SafetensorsWriter.write(
                dir.resolve("model-00002-of-00002.safetensors"),
                List.of(new T("c", "BF16", new long[] {2, 2}, bytes(8, 3))));
        SafetensorsWriter.write(
                dir.resolve("stray.safetensors"), List.of(new T("a", "BF16", new long[] {1}, bytes(2, 4))));
        Files.writeString(
                dir.resolve(Checkpoint.INDEX_FILE),
                "{\"metadata\": {\"total_size\": 20}, \"weight_map\": {"
                        + "\"a\": \"model-00001-of-00002.safetensors\", \"b\": \"model-00001-of-00002.safetensors\","
                        + "\"c\": \"model-00002-of-00002.safetensors\"}}");
        try (Checkpoint ck = Checkpoint.open(dir)) {
            assertThat(ck.tensors()).extracting(TensorInfo::name).containsExactlyInAnyOrder("a", "b", "c");
            assertThat(ck.require("c").file()).isEqualTo(dir.resolve("model-00002-of-00002.safetensors"));
            assertThat(ck.totalBytes()).isEqualTo(20);
            ByteBuffer c = ck.map(ck.require("c"), 0, 8);
            byte[] got = new byte[8];
            c.get(got);
            assertThat(got).isEqualTo(bytes(8, 3));
        }
    }

    @Test
    void indexNamingAMissingFileOrTensor() throws IOException {
        SafetensorsWriter.write(dir.resolve("part1.safetensors"), List.of(new T("a", "BF16", new long[] {4}, null)));
        Files.writeString(
                dir.resolve(Checkpoint.INDEX_FILE),
                "{\"weight_map\": {\"a\": \"part1.safetensors\", \"b\": \"part2.safetensors\"}}");
        assertThatThrownBy(() -> Checkpoint.open(dir))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining("references part2.safetensors, which does not exist");
        Files.writeString(
                dir.resolve(Checkpoint.INDEX_FILE),
                "{\"weight_map\": {\"a\": \"part1.safetensors\", \"b\": \"part1.safetensors\"}}");
        assertThatThrownBy(() -> Checkpoint.open(dir))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining("maps tensor b to part1.safetensors, which has no such tensor");
        Files.writeString(dir.resolve(Checkpoint.INDEX_FILE), "{\"metadata\": {}}");
        assertThatThrownBy(() -> Checkpoint.open(dir))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining("expected a non-empty \"weight_map\" object");
    }

    @Test
    void directoryWithoutSafetensors() throws IOException {
        Files.writeString(dir.resolve("pytorch_model.bin"), "x");
        assertThatThrownBy(() -> Checkpoint.open(dir))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining("has no model.safetensors.index.json and no *.safetensors file");
        assertThatThrownBy(() -> Checkpoint.open(dir.resolve("nope")))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining("is not a directory");
    }

    @Test
    void duplicateTensorAcrossFiles() {
        SafetensorsWriter.write(dir.resolve("a.safetensors"), List.of(new T("w", "BF16", new long[] {4}, null)));
        SafetensorsWriter.write(dir.resolve("b.safetensors"), List.of(new T("w", "BF16", new long[] {4}, null)));
        assertThatThrownBy(() -> Checkpoint.open(dir))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining("tensor w is in both");
    }

    @Test
    void sparseFileLargerThan2GiBWithATensorBeyond2Pow31() throws IOException {
        long pad = (1L << 31) + 1000;
        byte[] data = bytes(16, 5);
        Path f = SafetensorsWriter.write(
                dir.resolve("model.safetensors"),
                List.of(T.of("pad", "U8", pad), new T("far", "BF16", new long[] {2, 4}, data)));
        assertThat(Files.size(f)).isGreaterThan(1L << 31);
        try (Checkpoint ck = Checkpoint.open(dir)) {
            TensorInfo far = ck.require("far");
            assertThat(far.offset()).isGreaterThan(1L << 31);
            assertThat(ck.require("pad").byteLength()).isEqualTo(pad);
            assertThat(ck.totalBytes()).isEqualTo(pad + 16);
            ByteBuffer b = ck.map(far, 8, 8);
            byte[] got = new byte[8];
            b.get(got);
            byte[] want = new byte[8];
            System.arraycopy(data, 8, want, 0, 8);
            assertThat(got).isEqualTo(want);
            assertThatThrownBy(() -> ck.map(ck.require("pad")))
                    .isInstanceOf(ModelException.class)
                    .hasMessageContaining("cannot map " + pad + " bytes at once");
        }
    }

    static Stream<Arguments> badFiles() {
        String ok = "{\"w\":{\"dtype\":\"F16\",\"shape\":[2,2],\"data_offsets\":[0,8]}}";
        return Stream.of(
                Arguments.of(
                        "header length too big",
                        200L * 1024 * 1024,
                        ok,
                        8L,
                        "header length 209715200 is not plausible"),
                Arguments.of("header longer than file", 4096L, ok, 8L, "header length 4096 is not plausible"),
                Arguments.of(
                        "negative header length", -1L, ok, 8L, "header length 18446744073709551615 is not plausible"),
                Arguments.of("bad json", (long) "{\"w\": [".length(), "{\"w\": [", 8L, "header is not valid JSON"),
                Arguments.of("not an object", 6L, "[1, 2]", 8L, "header must be a JSON object"),
                Arguments.of(
                        "unknown dtype", null, ok.replace("F16", "Q4"), 8L, "tensor w: unknown safetensors dtype Q4"),
                Arguments.of(
                        "offsets beyond data",
                        null,
                        ok.replace("[0,8]", "[8,16]"),
                        8L,
                        "tensor w: data_offsets [8, 16] are outside the data section of 8 bytes"),
                Arguments.of(
                        "negative offsets",
                        null,
                        ok.replace("[0,8]", "[-2,6]"),
                        8L,
                        "data_offsets [-2, 6] are outside"),
                Arguments.of(
                        "size mismatch",
                        null,
                        ok.replace("[2,2]", "[2,3]"),
                        16L,
                        "tensor w: data_offsets [0, 8] hold 8 bytes but shape [2, 3] x F16 needs 12"),
                Arguments.of(
                        "bad shape",
                        null,
                        ok.replace("[2,2]", "[2,-2]"),
                        8L,
                        "shape [2,-2] must be a list of non-negative integers"),
                Arguments.of(
                        "missing offsets",
                        null,
                        "{\"w\":{\"dtype\":\"F16\",\"shape\":[2]}}",
                        8L,
                        "data_offsets must be [begin, end]"),
                Arguments.of(
                        "overlap",
                        null,
                        "{\"a\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]},"
                                + "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[6,10]}}",
                        16L,
                        "tensors a and b overlap"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badFiles")
    void rejectsBadFiles(String what, Long headerLength, String header, long dataBytes, String fragment) {
        long len =
                headerLength != null ? headerLength : header.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        Path f = SafetensorsWriter.writeRaw(dir.resolve("bad.safetensors"), len, header, dataBytes);
        assertThatThrownBy(() -> SafetensorsFile.read(f))
                .isInstanceOf(ModelException.class)
                .hasMessageStartingWith(f.toString())
                .hasMessageContaining(fragment);
    }

    @Test
    void truncatedFile() throws IOException {
        Path f = dir.resolve("short.safetensors");
        Files.write(f, new byte[] {1, 2, 3});
        assertThatThrownBy(() -> SafetensorsFile.read(f))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining("3 bytes is too short for a safetensors file");
        Path g = SafetensorsWriter.write(
                dir.resolve("cut.safetensors"), List.of(new T("w", "F32", new long[] {100}, null)));
        long size = Files.size(g);
        try (var raf = new java.io.RandomAccessFile(g.toFile(), "rw")) {
            raf.setLength(size - 1);
        }
        assertThatThrownBy(() -> SafetensorsFile.read(g))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining("tensor w: data_offsets [0, 400] are outside the data section of 399 bytes");
    }

    @Test
    void sizeMustBeWhatTheHeaderDeclares() throws IOException {
        Path f = SafetensorsWriter.write(
                dir.resolve("m.safetensors"),
                List.of(new T("w", "F32", new long[] {100}, null), new T("v", "BF16", new long[] {3}, null)));
        long size = Files.size(f);
        assertThat(SafetensorsFile.declaredSize(f)).isEqualTo(size);
        try (var raf = new java.io.RandomAccessFile(f.toFile(), "rw")) {
            raf.setLength(size + 5);
        }
        assertThat(SafetensorsFile.declaredSize(f)).isEqualTo(size);
        assertThatThrownBy(() -> SafetensorsFile.read(f))
                .isInstanceOf(ModelException.class)
                .hasMessage(f + ": " + (size + 5) + " bytes on disk but its header declares " + size
                        + " (8 + header + data); the file has 5 trailing bytes (a corrupted download?)");
        try (var raf = new java.io.RandomAccessFile(f.toFile(), "rw")) {
            raf.setLength(size - 100);
        }
        assertThat(SafetensorsFile.declaredSize(f)).isEqualTo(size);
    }

    @Test
    void dtypeSizes() {
        assertThat(SafeDType.parse("BF16").bytes()).isEqualTo(2);
        assertThat(SafeDType.parse("F8_E4M3").bytes()).isEqualTo(1);
        assertThat(SafeDType.parse("I64").bytes()).isEqualTo(8);
        assertThat(SafeDType.parse("F32").bytes()).isEqualTo(4);
        assertThatThrownBy(() -> SafeDType.parse("bf16")).hasMessage("unknown safetensors dtype bf16");
        // every dtype the engine knows has a size in the header parser's table (which checks data_offsets against
        // shapes)
        assertThat(SafeDType.values())
                .allSatisfy(d -> assertThat(d.bytes()).as(d.name()).isPositive());
    }
}
