package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** d1 on real SQLite files: its SQL routes, and what SQLite itself refuses for a call. */
@SharedServer
class D1Test {

    private static Http.Reply sql(Http http, String id, String query, String actingSpace, Object... params) {
        return http.post(
                "/api/resources/" + id + "/sql/query" + (actingSpace == null ? "" : "?space_id=" + actingSpace),
                Map.of("sql", query, "params", List.of(params)));
    }

    @Test
    void aD1DatabaseIsQueriedListedPagedAndExported(AtriumServer server) {
        User u = server.newUser();
        Http http = u.http();
        Http.Reply created =
                http.post("/api/resources", Map.of("name", "app-db", "type", "d1", "config", Map.of("max_rows", 2)));
        assertEquals(201, created.status(), created.body());
        String id = created.get("resource").get("id").asText();
        assertEquals(
                200,
                sql(http, id, "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT)", null)
                        .status());
        JsonNode inserted = sql(
                        http, id, "INSERT INTO people (name) VALUES (?), (?), (?)", null, "ada", "grace", "o'hara")
                .json();
        assertEquals(3, inserted.get("rows_changed").asInt());
        JsonNode rows =
                sql(http, id, "SELECT name FROM people ORDER BY id", null).json();
        assertEquals(List.of("name"), List.of(rows.get("columns").get(0).asText()));
        assertEquals(2, rows.get("rows").size(), "cut at max_rows");
        assertTrue(rows.get("truncated").asBoolean());
        JsonNode tables =
                http.get("/api/resources/" + id + "/sql/tables").json().get("tables");
        assertEquals("people", tables.get(0).get("name").asText());
        assertEquals(3, tables.get(0).get("row_count").asInt());
        JsonNode page = http.get("/api/resources/" + id + "/sql/tables/people?limit=1&offset=2")
                .json();
        assertEquals("o'hara", page.get("rows").get(0).get(1).asText());
        assertEquals(
                404, http.get("/api/resources/" + id + "/sql/tables/nobody").status());
        Http.Reply dump = http.post("/api/resources/" + id + "/sql/export", null);
        assertEquals(200, dump.status(), dump.body());
        assertTrue(
                dump.body().contains("CREATE TABLE people")
                        && dump.body().contains("INSERT INTO \"people\" VALUES(3,'o''hara');"),
                dump.body());
    }

    @Test
    void sqliteRefusesSeveralStatementsAttachWritingPragmasWritesThroughAReadGrantAndSlowQueries(AtriumServer server) {
        User u = server.newUser();
        Http http = u.http();
        String second = http.post("/api/spaces", Map.of("name", "reader"))
                .get("space")
                .get("id")
                .asText();
        String id = http.post(
                        "/api/resources",
                        Map.of("name", "guarded", "type", "d1", "config", Map.of("query_timeout_ms", 200)))
                .get("resource")
                .get("id")
                .asText();
        assertEquals(200, sql(http, id, "CREATE TABLE t (x)", null).status());
        assertEquals(200, sql(http, id, "INSERT INTO t VALUES (1)", null).status());

        BadInputTest.assertSpecError(sql(http, id, "INSERT INTO t VALUES (2); DROP TABLE t", null), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                sql(http, id, "ATTACH DATABASE '/tmp/atrium-d1-other.db' AS other", null), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(sql(http, id, "VACUUM INTO '/tmp/atrium-d1-copy.db'", null), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(sql(http, id, "PRAGMA journal_mode = DELETE", null), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(sql(http, id, "PRAGMA writable_schema = ON", null), 400, "BAD_REQUEST");
        Http.Reply slow = sql(
                http,
                id,
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
                null);
        BadInputTest.assertSpecError(slow, 400, "BAD_REQUEST");
        assertTrue(slow.body().contains("cancelled"), slow.body());
        // a ';' inside a string or a comment does not end the statement
        assertEquals(
                200,
                sql(http, id, "SELECT 'a;b' AS s -- ; not a second statement", null)
                        .status());

        assertEquals(
                201,
                http.post("/api/resources/" + id + "/access", Map.of("space_id", second, "permission", "read"))
                        .status());
        assertEquals(
                1,
                sql(http, id, "SELECT count(*) FROM t", second)
                        .json()
                        .get("rows")
                        .get(0)
                        .get(0)
                        .asInt());
        BadInputTest.assertSpecError(sql(http, id, "INSERT INTO t VALUES (3)", second), 403, "FORBIDDEN");
        BadInputTest.assertSpecError(sql(http, id, "CREATE TABLE u (y)", second), 403, "FORBIDDEN");
        BadInputTest.assertSpecError(sql(http, id, "WITH d AS (SELECT 1) DELETE FROM t", second), 403, "FORBIDDEN");
        assertEquals(
                1,
                sql(http, id, "SELECT count(*) FROM t", null)
                        .json()
                        .get("rows")
                        .get(0)
                        .get(0)
                        .asInt(),
                "nothing changed");
        assertEquals(
                1,
                http.get("/api/resources/" + id + "/sql/tables")
                        .json()
                        .get("tables")
                        .size());
    }

    /** A PAT holding only files:read, of the resource's owner. */
    private static Http readToken(AtriumServer server, User owner) {
        Http.Reply token =
                server.operator().post("/admin/users/" + owner.username() + "/tokens", Map.of("scopes", "files:read"));
        assertEquals(201, token.status(), token.body());
        return owner.http().as(token.json().path("token").asText());
    }

    @Test
    void aFilesReadTokenOfTheOwnerGetsAReadOnlyConnection(AtriumServer server) {
        User u = server.newUser();
        Http http = u.http();
        String id = http.post("/api/resources", Map.of("name", "read-scoped", "type", "d1"))
                .get("resource")
                .get("id")
                .asText();
        assertEquals(200, sql(http, id, "CREATE TABLE t (x)", null).status());
        assertEquals(200, sql(http, id, "INSERT INTO t VALUES (1)", null).status());
        Http reader = readToken(server, u);

        assertEquals(
                1,
                sql(reader, id, "SELECT count(*) FROM t", null)
                        .json()
                        .get("rows")
                        .get(0)
                        .get(0)
                        .asInt(),
                "a read token may query");
        assertEquals(200, reader.get("/api/resources/" + id + "/sql/tables").status());
        assertEquals(
                200, reader.post("/api/resources/" + id + "/sql/export", null).status());
        for (String write : List.of(
                "INSERT INTO t VALUES (2)",
                "DELETE FROM t",
                "UPDATE t SET x = 9",
                "CREATE TABLE u (y)",
                "DROP TABLE t",
                "CREATE INDEX tx ON t (x)",
                "WITH d AS (SELECT 1) DELETE FROM t",
                "REPLACE INTO t VALUES (3)")) {
            Http.Reply refused = sql(reader, id, write, null);
            BadInputTest.assertSpecError(refused, 403, "FORBIDDEN");
            assertTrue(
                    refused.json().get("error").get("message").asText().contains("files:write"),
                    write + ": " + refused.body());
        }
        // the PRAGMAs that would lift the read-only state are refused before SQLite compiles them
        BadInputTest.assertSpecError(sql(reader, id, "PRAGMA query_only = OFF", null), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(sql(reader, id, "EXPLAIN PRAGMA query_only = OFF", null), 400, "BAD_REQUEST");

        JsonNode rows = sql(http, id, "SELECT x FROM t", null).json().get("rows");
        assertEquals(1, rows.size(), "nothing changed: " + rows);
        assertEquals(1, rows.get(0).get(0).asInt());
        JsonNode tables =
                http.get("/api/resources/" + id + "/sql/tables").json().get("tables");
        assertEquals(1, tables.size(), tables.toString());
        assertEquals("t", tables.get(0).get("name").asText());
        // a token with files:write still writes
        assertEquals(200, sql(http, id, "INSERT INTO t VALUES (2)", null).status());
    }

    @Test
    void aPragmaBehindExplainIsCheckedAsThePragmaItself(AtriumServer server) {
        User u = server.newUser();
        Http http = u.http();
        String id = http.post("/api/resources", Map.of("name", "explained", "type", "d1"))
                .get("resource")
                .get("id")
                .asText();
        assertEquals(200, sql(http, id, "CREATE TABLE t (x)", null).status());
        // SQLite applies many PRAGMAs while compiling them, so EXPLAIN would run them: each is refused as the bare
        // PRAGMA is
        for (String bypass : List.of(
                "EXPLAIN PRAGMA writable_schema = ON",
                "explain /* c */ pragma journal_mode = DELETE",
                "EXPLAIN QUERY PLAN PRAGMA writable_schema = ON",
                "EXPLAIN\n-- c\nPRAGMA main.journal_mode = DELETE",
                "PRAGMA table_info/**/.writable_schema = ON",
                "PRAGMA \"writable_schema\" = ON")) {
            Http.Reply refused = sql(http, id, bypass, null);
            BadInputTest.assertSpecError(refused, 400, "BAD_REQUEST");
            assertTrue(refused.body().contains("PRAGMA"), bypass + ": " + refused.body());
        }
        // introspection still works, also behind EXPLAIN and as SQLite's table-valued function
        assertEquals(
                "x",
                sql(http, id, "PRAGMA table_info(t)", null)
                        .json()
                        .get("rows")
                        .get(0)
                        .get(1)
                        .asText());
        assertEquals(200, sql(http, id, "EXPLAIN PRAGMA table_info(t)", null).status());
        assertEquals(
                "x",
                sql(http, id, "SELECT name FROM pragma_table_info('t')", null)
                        .json()
                        .get("rows")
                        .get(0)
                        .get(0)
                        .asText());
        assertEquals(
                200, sql(http, id, "EXPLAIN QUERY PLAN SELECT * FROM t", null).status());
    }

    @Test
    void theDatabaseFileIsTheServersAlone(AtriumServer server) throws Exception {
        User u = server.newUser();
        Http http = u.http();
        String id = http.post("/api/resources", Map.of("name", "private-db", "type", "d1"))
                .get("resource")
                .get("id")
                .asText();
        assertEquals(200, sql(http, id, "CREATE TABLE t (x)", null).status());
        Path file = server.data.resolve("resources").resolve(id).resolve("db.sqlite");
        assertTrue(Files.isRegularFile(file), file.toString());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    }
}
