package dev.atrium.billing.api;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Where metered actions are written down, durably: an event recorded here survives a crash of the process that
 * recorded it and is counted once, however often it is recorded.
 */
@ProviderType
public interface UsageRecorder {

    /**
     * Records an event outside any transaction of the caller: it is kept on local disk at once and moved into the
     * database in the background. Cheap; never throws for a database that is down.
     */
    void record(UsageEvent event);

    /**
     * Records an event in the caller's transaction on Atrium's database, so that it is kept exactly when the action
     * is.
     */
    void record(Connection transaction, UsageEvent event) throws SQLException;

    /**
     * The current calendar month's (UTC) totals of one workspace for one dimension, by meter, as recorded so far
     * (a resource's usage, for example).
     */
    Map<String, Long> monthTotals(String spaceId, String dimension);
}
