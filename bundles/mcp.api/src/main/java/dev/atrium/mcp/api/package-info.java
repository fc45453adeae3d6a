/**
 * What the MCP capability lets other capabilities use: {@link dev.atrium.mcp.api.McpEndpoints}, MCP servers a
 * capability (the app platform) registers in a workspace and keeps, beside those its owner registers.
 */
@org.osgi.annotation.versioning.Version("1.0.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.mcp.api;
