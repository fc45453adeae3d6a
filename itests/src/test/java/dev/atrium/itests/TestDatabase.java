package dev.atrium.itests;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/**
 * A fresh PostgreSQL database for one test run: on the server at 127.0.0.1:5432 when one answers (CI and
 * developer machines), otherwise on an embedded PostgreSQL started for the run.
 */
final class TestDatabase implements AutoCloseable {

    private final String adminUrl;
    private final String name;
    private EmbeddedPostgres embedded;
    /** The data directory and port of a server of the database's own ({@link #ownServer}), else null and 0. */
    private final java.nio.file.Path ownDirectory;

    private final int ownPort;

    private TestDatabase(String adminUrl, String name, EmbeddedPostgres embedded) {
        this(adminUrl, name, embedded, null, 0);
    }

    private TestDatabase(
            String adminUrl, String name, EmbeddedPostgres embedded, java.nio.file.Path ownDirectory, int ownPort) {
        this.adminUrl = adminUrl;
        this.name = name;
        this.embedded = embedded;
        this.ownDirectory = ownDirectory;
        this.ownPort = ownPort;
    }

    static TestDatabase create() throws IOException, SQLException {
        String name =
                "atrium_it_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        String host = System.getenv().getOrDefault("ATRIUM_TEST_PG", "127.0.0.1:5432");
        EmbeddedPostgres embedded = null;
        if (!answers(host)) {
            embedded = EmbeddedPostgres.builder()
                    .setPgBinaryResolver(TestDatabase::binaries)
                    .start();
            host = "127.0.0.1:" + embedded.getPort();
        }
        String admin = "jdbc:postgresql://" + host + "/postgres?user=postgres";
        try (Connection c = DriverManager.getConnection(admin);
                Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        }
        return new TestDatabase(admin, name, embedded);
    }

    /**
     * A database on a PostgreSQL server of its own, which {@link #stopServer} and {@link #startServer} stop and start
     * again on the same data directory and port, as a restart or a failover does to a server's clients.
     */
    static TestDatabase ownServer(java.nio.file.Path directory) throws IOException, SQLException {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        // never "clean": zonky deletes a clean server's directory when it stops, and this one must start again on it
        EmbeddedPostgres embedded = ownServerBuilder(directory, port).start();
        String admin = "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres";
        String name = "atrium_it_own";
        try (Connection c = DriverManager.getConnection(admin);
                Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        }
        return new TestDatabase(admin, name, embedded, directory, port);
    }

    /**
     * The embedded cluster every release before PostgreSQL 18 made: PostgreSQL 14 in {@code pgData}, started from the
     * binaries the database bundle carries for upgrades, its database {@code postgres} the one the server uses.
     */
    static TestDatabase previousMajorCluster(java.nio.file.Path pgData) throws IOException {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        java.nio.file.Path bundle;
        try (var jars = java.nio.file.Files.list(AtriumServer.ROOT.resolve("bundles/database/target"))) {
            bundle = jars.filter(j -> j.getFileName().toString().matches("database-[^-]+(-SNAPSHOT)?\\.jar"))
                    .findFirst()
                    .orElseThrow(() -> new IOException("build the database bundle first"));
        }
        java.net.URL previous =
                new java.net.URL("jar:" + bundle.toUri() + "!/postgres-previous/postgres-linux-x86_64.txz");
        java.nio.file.Files.createDirectories(pgData);
        EmbeddedPostgres embedded = EmbeddedPostgres.builder()
                .setDataDirectory(pgData)
                .setPort(port)
                .setCleanDataDirectory(false)
                .setPgBinaryResolver((system, machine) -> previous.openStream())
                .start();
        return new TestDatabase(
                "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres", "postgres", embedded, pgData, port);
    }

    private static EmbeddedPostgres.Builder ownServerBuilder(java.nio.file.Path directory, int port) {
        return EmbeddedPostgres.builder()
                .setDataDirectory(directory)
                .setPort(port)
                .setCleanDataDirectory(false)
                .setPgBinaryResolver(TestDatabase::binaries);
    }

    /**
     * The first PostgreSQL archive on the class path: the database bundle's jar carries the same one as zonky's binaries,
     * and zonky's own resolver refuses two ("Duplicate embedded postgres binaries").
     */
    private static java.io.InputStream binaries(String system, String machine) {
        // the suite runs on Linux x86-64 only (the database bundle ships that archive alone)
        return TestDatabase.class.getResourceAsStream("/postgres-linux-x86_64.txz");
    }

    /** Stops this database's own server (a fast shutdown: open connections are terminated, 57P01). */
    synchronized void stopServer() throws IOException {
        if (ownDirectory == null) {
            throw new IllegalStateException("only a database made by ownServer stops its server");
        }
        if (embedded == null) {
            return;
        }
        embedded.close();
        embedded = null;
    }

    /** Starts this database's own server again on the same data directory and port. */
    synchronized void startServer() throws IOException {
        if (embedded != null) {
            return;
        }
        embedded = ownServerBuilder(ownDirectory, ownPort).start();
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
        try (Connection c = connect();
                var ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            return ps.executeUpdate();
        }
    }

    @Override
    public synchronized void close() throws Exception {
        if (ownDirectory != null) {
            // the server is the database's own: stopping it is all there is to clean (its directory is the test's)
            stopServer();
            return;
        }
        try (Connection c = DriverManager.getConnection(adminUrl);
                Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        } finally {
            if (embedded != null) {
                embedded.close();
            }
        }
    }
}
