package dev.atrium.apps.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;

/**
 * What an app change needs beyond the routes' {@code repos:write}: making or deleting resources (and so their data)
 * is what {@code files:write} allows on {@code /api/resources}; an OAuth client and its secret are the OAuth
 * capability's to give, which asks for a signed-in session or a personal access token with every scope. An MCP server
 * asks what {@code /api/mcp/servers} asks ({@code threads:write}), a file handler {@code files:write}.
 */
final class Access {

    private Access() {}

    static void resources(Caller caller) {
        if (!caller.hasScope("files:write")) {
            throw ApiException.forbidden("this change makes or deletes resources: it needs the scope files:write");
        }
    }

    /** An MCP server registered in the workspace is offered to its runs: {@code /api/mcp/servers} asks the same. */
    static void mcpServers(Caller caller) {
        if (!caller.hasScope("threads:write")) {
            throw ApiException.forbidden(
                    "this change registers or removes MCP servers: it needs the scope threads:write");
        }
    }

    /** A file handler decides what opens the workspace's files. */
    static void fileHandlers(Caller caller) {
        if (!caller.hasScope("files:write")) {
            throw ApiException.forbidden("this change adds or removes file handlers: it needs the scope files:write");
        }
    }

    static void oauthClients(Caller caller) {
        if ("oauth".equals(caller.authMethod()) || !caller.hasScope(Caller.ALL_SCOPES)) {
            throw ApiException.forbidden("this change registers, changes or rotates an OAuth client: it needs a"
                    + " signed-in session or a personal access token with scope *");
        }
    }
}
