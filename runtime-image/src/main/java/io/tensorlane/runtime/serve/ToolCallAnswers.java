package io.tensorlane.runtime.serve;

import io.tensorlane.runtime.chat.ToolCallFormat;
import io.tensorlane.runtime.chat.ToolCallOutput;
import io.tensorlane.runtime.chat.ToolCallStream;
import io.tensorlane.runtime.openai.ChatResponses;
import java.util.ArrayList;
import java.util.List;

/** The tool calls of a chat answer as the responses carry them: the whole answer's, or a streamed delta's pieces. */
final class ToolCallAnswers {
    private ToolCallAnswers() {}

    /** The first {@code maxCalls} calls parsed out of {@code parsed}, each with a new id. */
    static List<ChatResponses.ToolCall> calls(ToolCallFormat tools, ToolCallOutput parsed, int maxCalls) {
        List<ChatResponses.ToolCall> cs = new ArrayList<>();
        for (ToolCallOutput.Call c :
                parsed.calls().subList(0, Math.min(maxCalls, parsed.calls().size()))) {
            cs.add(new ChatResponses.ToolCall(tools.newId(), c.name(), c.arguments()));
        }
        return cs;
    }

    /** A streamed delta's calls as chunk pieces. */
    static List<ChatResponses.ToolCallPiece> pieces(ToolCallStream.Delta d) {
        List<ChatResponses.ToolCallPiece> out = new ArrayList<>();
        for (ToolCallStream.CallDelta c : d.calls()) {
            out.add(new ChatResponses.ToolCallPiece(c.index(), c.id(), c.name(), c.arguments()));
        }
        return out;
    }
}
