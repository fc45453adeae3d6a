package dev.atrium.itests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * A minimal MCP server (Streamable HTTP, JSON answers, no session) on loopback with one tool, {@code ping}: for the
 * route sweep, whose fixture server must answer {@code GET /api/mcp/servers/:id/tools} the same way every time. One per
 * test JVM, started on first use.
 */
final class TinyMcpServer {

    private static HttpServer server;

    private TinyMcpServer() {}

    static synchronized String url() throws IOException {
        if (server == null) {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/mcp", TinyMcpServer::handle);
            server.start();
        }
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/mcp";
    }

    private static void handle(HttpExchange ex) throws IOException {
        try (ex) {
            if (!"POST".equals(ex.getRequestMethod())) {
                ex.sendResponseHeaders(405, -1);
                return;
            }
            JsonNode in = Http.JSON.readTree(ex.getRequestBody());
            if (!in.has("id")) {
                ex.sendResponseHeaders(202, -1);
                return;
            }
            ObjectNode out = Http.JSON.createObjectNode();
            out.put("jsonrpc", "2.0");
            out.set("id", in.get("id"));
            ObjectNode result = out.putObject("result");
            switch (in.path("method").asText()) {
                case "initialize" -> {
                    result.put("protocolVersion", "2025-06-18");
                    result.putObject("capabilities").putObject("tools");
                    result.putObject("serverInfo").put("name", "tiny").put("version", "1");
                }
                case "tools/list" -> {
                    ObjectNode tool = result.putArray("tools").addObject();
                    tool.put("name", "ping");
                    tool.put("description", "Answers pong.");
                    tool.putObject("inputSchema").put("type", "object");
                }
                case "tools/call" ->
                    result.putArray("content").addObject().put("type", "text").put("text", "pong");
                default -> {
                    out.remove("result");
                    out.putObject("error").put("code", -32601).put("message", "method not found");
                }
            }
            byte[] body = out.toString().getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
        }
    }
}
