package dev.atrium.itests;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/**
 * A fresh PostgreSQL database for one test run: on the server at 127.0.0.1:5432 when one answers (CI and
 * developer machines), otherwise on an embedded PostgreSQL started for the run.
 */
final class TestDatabase implements AutoCloseable {

    private final String adminUrl;
    private final String name;
    private final EmbeddedPostgres embedded;

    private TestDatabase(String adminUrl, String name, EmbeddedPostgres embedded) {
        this.adminUrl = adminUrl;
        this.name = name;
        this.embedded = embedded;
    }

    static TestDatabase create() throws IOException, SQLException {
        String name = "atrium_it_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        String host = System.getenv().getOrDefault("ATRIUM_TEST_PG", "127.0.0.1:5432");
        EmbeddedPostgres embedded = null;
        if (!answers(host)) {
            embedded = EmbeddedPostgres.builder().start();
            host = "127.0.0.1:" + embedded.getPort();
        }
        String admin = "jdbc:postgresql://" + host + "/postgres?user=postgres";
        try (Connection c = DriverManager.getConnection(admin); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        }
        return new TestDatabase(admin, name, embedded);
    }

    private static boolean answers(String hostPort) {
        String[] hp = hostPort.split(":");
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    String url() {
        return adminUrl.replace("/postgres?", "/" + name + "?");
    }

    Connection connect() throws SQLException {
        return DriverManager.getConnection(url());
    }

    /** Runs one statement as a test fixture (forging rows a client could never write through the API). */
    int execute(String sql, Object... args) throws SQLException {
        try (Connection c = connect(); var ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            return ps.executeUpdate();
        }
    }

    @Override
    public void close() throws Exception {
        try (Connection c = DriverManager.getConnection(adminUrl); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        } finally {
            if (embedded != null) {
                embedded.close();
            }
        }
    }
}
