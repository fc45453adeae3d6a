package dev.atrium.database.internal;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts an embedded PostgreSQL again when a start fails. The library picks a free port just before the server binds
 * it, and on a busy machine another process can take the port in between (an outgoing connection's ephemeral port,
 * another server): PostgreSQL then stops with "could not create any TCP/IP sockets", and without a second attempt the
 * whole server would run without its database. Each attempt builds anew, so it picks a new port.
 */
final class EmbeddedStarts {

    static final int ATTEMPTS = 3;

    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedStarts.class);

    /** One start: a builder made for this attempt, started. */
    interface Start {
        EmbeddedPostgres start() throws IOException;
    }

    private EmbeddedStarts() {}

    static EmbeddedPostgres withRetries(String what, Start start) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return start.start();
            } catch (IOException | RuntimeException e) {
                if (attempt >= ATTEMPTS) {
                    throw e;
                }
                LOG.warn(
                        "{} did not start (attempt {} of {}); trying again on another port: {}",
                        what,
                        attempt,
                        ATTEMPTS,
                        e.toString());
            }
        }
    }
}
