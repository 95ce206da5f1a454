package io.tensorlane.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.engine.GraphEdges.Edge;
import io.tensorlane.runtime.engine.GraphEdges.Node;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class GraphEdgesTest {
    static final long MODEL = 0x1000;
    static final long CUBLAS = 0x2000;
    static final Map<Long, Node> NODES = Map.of(
            1L, new Node(true, MODEL), // a model kernel
            2L, new Node(true, MODEL),
            3L, new Node(true, CUBLAS), // a cuBLAS kernel
            4L, new Node(true, 0L), // a library kernel without a module
            5L, Node.OTHER); // a memcpy / event node

    static Stream<Arguments> table() {
        return Stream.of(
                Arguments.of("model kernel -> model kernel", new Edge(1, 2, false), true),
                Arguments.of("cuBLAS kernel -> model kernel (the model kernel waits)", new Edge(3, 2, false), true),
                Arguments.of("library kernel -> model kernel", new Edge(4, 1, false), true),
                Arguments.of("model kernel -> cuBLAS kernel (cuBLAS does not wait)", new Edge(1, 3, false), false),
                Arguments.of("model kernel -> library kernel", new Edge(1, 4, false), false),
                Arguments.of("event/memcpy node -> model kernel", new Edge(5, 1, false), false),
                Arguments.of("model kernel -> event/memcpy node", new Edge(2, 5, false), false),
                Arguments.of("already programmatic", new Edge(1, 2, true), false),
                Arguments.of("unknown node -> model kernel", new Edge(9, 2, false), false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void oneEdge(String what, Edge e, boolean programmatic) {
        assertThat(GraphEdges.programmatic(List.of(e), NODES, Set.of(MODEL))).hasSize(programmatic ? 1 : 0);
    }

    @ParameterizedTest(name = "{0}, nothing waits")
    @MethodSource("table")
    void noWaitingModuleChangesNothing(String what, Edge e, boolean programmatic) {
        assertThat(GraphEdges.programmatic(List.of(e), NODES, Set.of())).isEmpty();
    }

    @org.junit.jupiter.api.Test
    void aChainKeepsItsOrderAndSkipsTheEdgesIntoOtherWork() {
        List<Edge> chain =
                List.of(new Edge(1, 2, false), new Edge(2, 3, false), new Edge(3, 1, false), new Edge(2, 5, false));
        assertThat(GraphEdges.programmatic(chain, NODES, Set.of(MODEL)))
                .containsExactly(new Edge(1, 2, false), new Edge(3, 1, false));
    }
}
