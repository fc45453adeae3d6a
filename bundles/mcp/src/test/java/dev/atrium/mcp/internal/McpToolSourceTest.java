package dev.atrium.mcp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class McpToolSourceTest {

    @Test
    void toolNamesAreWhatEveryModelApiAccepts() {
        assertEquals("mcp_everything_get_sum", McpToolSource.toolName("everything", "get-sum"));
        assertEquals("mcp_old_sse_echo", McpToolSource.toolName("old-sse", "echo"));
        assertEquals(64, McpToolSource.toolName("s", "t".repeat(100)).length());
        assertEquals("mcp_s_a_b_c", McpToolSource.toolName("s", "a.b/C"));
    }
}
