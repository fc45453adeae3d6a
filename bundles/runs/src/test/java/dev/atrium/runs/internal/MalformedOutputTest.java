package dev.atrium.runs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.NulText;
import dev.atrium.runs.api.AgentTool;
import dev.atrium.runs.api.ModelProvider.Reply;
import dev.atrium.runs.api.ModelProvider.ToolCall;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What a model or a tool hands back is never trusted to be well formed. */
class MalformedOutputTest {

    static final class Echo implements AgentTool {
        final List<String> seen = new ArrayList<>();

        @Override
        public String name() {
            return "echo";
        }

        @Override
        public String description() {
            return "echo";
        }

        @Override
        public String parametersSchema() {
            return "{\"type\":\"object\"}";
        }

        @Override
        public Set<String> requiredGrants() {
            return Set.of();
        }

        @Override
        public String execute(Context context, String arguments) {
            seen.add(arguments);
            return "bin\0ary";
        }
    }

    static final AgentTool.Context CONTEXT =
            new AgentTool.Context("run_1", "th_1", "sp_1", "pr_1", ToolExecutor.ALL_GRANTS);

    @Test
    void aToolCallWithoutANameOrWithInvalidArgumentsIsAnErrorResultAndTheToolDoesNotRun() throws InterruptedException {
        ToolExecutor tools = new ToolExecutor();
        Echo echo = new Echo();
        tools.addTool(echo);
        ToolExecutor.Result noName = tools.execute(new ToolCall("c1", null, "{}"), CONTEXT);
        assertTrue(noName.error(), noName.text());
        ToolExecutor.Result badJson = tools.execute(new ToolCall("c2", "echo", "{\"a\": "), CONTEXT);
        assertTrue(badJson.error());
        assertTrue(badJson.text().contains("not valid JSON"), badJson.text());
        ToolExecutor.Result notObject = tools.execute(new ToolCall("c3", "echo", "[1]"), CONTEXT);
        assertTrue(notObject.error());
        assertTrue(echo.seen.isEmpty());
        ToolExecutor.Result ok = tools.execute(new ToolCall("c4", "echo", null), CONTEXT);
        assertFalse(ok.error());
        assertEquals(List.of("{}"), echo.seen);
        assertEquals("bin\uFFFDary", NulText.clean(ok.text()));
    }

    @Test
    void anInterruptedToolEndsTheRunInsteadOfBecomingAnErrorResult() {
        ToolExecutor tools = new ToolExecutor();
        tools.addTool(new AgentTool() {
            @Override
            public String name() {
                return "wait";
            }

            @Override
            public String description() {
                return "waits until interrupted";
            }

            @Override
            public String parametersSchema() {
                return "{\"type\":\"object\"}";
            }

            @Override
            public java.util.Set<String> requiredGrants() {
                return java.util.Set.of();
            }

            @Override
            public String execute(Context context, String arguments) throws InterruptedException {
                throw new InterruptedException("cancelled");
            }
        });
        org.junit.jupiter.api.Assertions.assertThrows(
                InterruptedException.class, () -> tools.execute(new ToolCall("c1", "wait", "{}"), CONTEXT));
    }

    @Test
    void aReplyIsSanitisedBeforeTheRunUsesIt() {
        Reply r = Dispatcher.sanitise(
                new Reply(
                        "a\0b",
                        java.util.Arrays.asList(
                                new ToolCall(null, null, null), null, new ToolCall("c\0", "echo", "{\"x\":\"\0\"}")),
                        "tool_calls"),
                3);
        assertEquals("a\uFFFDb", r.text());
        assertEquals(2, r.toolCalls().size());
        assertEquals("call_atrium_3_1", r.toolCalls().get(0).id());
        assertEquals("", r.toolCalls().get(0).name());
        assertEquals("", r.toolCalls().get(0).arguments());
        assertEquals("c\uFFFD", r.toolCalls().get(1).id());
        assertFalse(r.toolCalls().get(1).arguments().contains("\0"));
        assertEquals("", Dispatcher.sanitise(new Reply(null, null, null), 1).text());
    }
}
