package dev.atrium.runs.api;

import java.io.IOException;
import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A model API (OpenAI-compatible chat completions, Anthropic Messages, …). A workspace names its provider in
 * {@code PATCH /api/spaces/:spaceId/model} ({@code {model, provider}}); the run loop picks the registered service
 * whose {@link #name()} equals it. Implementations stream: they report text as it arrives.
 */
@ConsumerType
public interface ModelProvider {

    /** The provider name a workspace chooses, e.g. {@code openai} or {@code anthropic}. */
    String name();

    /**
     * One model turn.
     *
     * @param request  the conversation so far and the tools on offer
     * @param listener told of every text fragment as it streams in
     * @return the whole turn: text and any tool calls
     * @throws IOException when the provider cannot be reached or answers with an error (the message says which)
     */
    Reply complete(Request request, Listener listener) throws IOException, InterruptedException;

    /** Receives streamed output. */
    @FunctionalInterface
    interface Listener {
        void text(String delta);
    }

    /**
     * @param model     the model name
     * @param system    the system prompt, or null
     * @param messages  the conversation, oldest first
     * @param tools     the tools the model may call
     * @param maxTokens the output limit of this turn
     */
    record Request(String model, String system, List<Message> messages, List<Tool> tools, int maxTokens) {}

    /**
     * A conversation entry. {@code role} is {@code user}, {@code assistant} (text and/or {@code toolCalls}) or
     * {@code tool} (a tool's result: {@code toolCallId} and {@code text}).
     */
    record Message(String role, String text, List<ToolCall> toolCalls, String toolCallId) {
        public static Message user(String text) {
            return new Message("user", text, List.of(), null);
        }

        public static Message assistant(String text, List<ToolCall> calls) {
            return new Message("assistant", text, calls, null);
        }

        public static Message tool(String toolCallId, String result) {
            return new Message("tool", result, List.of(), toolCallId);
        }
    }

    /** A tool call the model made; {@code arguments} is a JSON object's text. */
    record ToolCall(String id, String name, String arguments) {}

    /** A tool on offer; {@code parametersSchema} is a JSON Schema object's text. */
    record Tool(String name, String description, String parametersSchema) {}

    /**
     * A finished turn: its text (possibly empty), tool calls (possibly none), the provider's stop reason, and the
     * tokens the provider counted ({@link Usage#NONE} when it said nothing).
     */
    record Reply(String text, List<ToolCall> toolCalls, String stopReason, Usage usage) {

        public Reply {
            usage = usage == null ? Usage.NONE : usage;
        }

        /** A turn whose provider counted no tokens. */
        public Reply(String text, List<ToolCall> toolCalls, String stopReason) {
            this(text, toolCalls, stopReason, Usage.NONE);
        }
    }

    /**
     * The tokens of one turn as the provider counted them, for metering.
     *
     * @since 1.4
     */
    record Usage(long inputTokens, long outputTokens) {
        public static final Usage NONE = new Usage(0, 0);
    }
}
