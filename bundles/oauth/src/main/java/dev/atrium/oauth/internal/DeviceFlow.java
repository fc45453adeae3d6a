package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.Sql;
import java.sql.SQLException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The device authorization grant (RFC 8628): device and user codes, the user's decision on the verification page,
 * and the device's polling at the token endpoint.
 */
@Component(service = DeviceFlow.class)
public class DeviceFlow {

    private final Sql sql;
    private final TokenGrants grants;
    private final OAuthConsents consents;
    private final OAuthAuditLog audit;

    @Activate
    public DeviceFlow(
            @Reference DataSource dataSource,
            @Reference TokenGrants grants,
            @Reference OAuthConsents consents,
            @Reference OAuthAuditLog audit) {
        this.sql = new Sql(dataSource);
        this.grants = grants;
        this.consents = consents;
        this.audit = audit;
    }

    Map<String, Object> deviceAuthorization(String issuer, Client client, Map<String, String> p) {
        if (!client.grantTypes().contains(OAuthServer.DEVICE_GRANT)) {
            throw OAuthError.unauthorizedClient("this client may not use the device_code grant");
        }
        Set<String> scopes = Authorizations.requestedScopes(p.get("scope"), client, OAuthError::invalidScope);
        String deviceCode = Ids.random("atd_", 40);
        String userCode = null;
        for (int attempt = 0; userCode == null && attempt < 5; attempt++) {
            String candidate = UserCodes.generate();
            try {
                sql.update(
                        "INSERT INTO oauth_device_codes (device_code_hash, user_code, client_id, scopes, interval_seconds, expires_at) "
                                + "VALUES (?, ?, ?, ?, ?, ?)",
                        Digests.sha256(deviceCode),
                        candidate,
                        client.clientId(),
                        ScopeSet.join(scopes),
                        OAuthServer.DEVICE_INTERVAL,
                        Instant.now().plus(OAuthServer.DEVICE_TTL));
                userCode = candidate;
            } catch (RuntimeException collision) {
                if (attempt == 4) {
                    throw collision;
                }
            }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("device_code", deviceCode);
        m.put("user_code", userCode);
        m.put("verification_uri", issuer + "/oauth/device");
        m.put("verification_uri_complete", issuer + "/oauth/device?user_code=" + userCode);
        m.put("expires_in", OAuthServer.DEVICE_TTL.toSeconds());
        m.put("interval", OAuthServer.DEVICE_INTERVAL);
        return m;
    }

    record DeviceRow(
            byte[] hash,
            String userCode,
            String clientId,
            Set<String> scopes,
            String principalId,
            String status,
            int interval,
            Instant lastPollAt,
            Instant expiresAt,
            Authentication authentication) {}

    private static DeviceRow deviceRow(java.sql.ResultSet rs) throws SQLException {
        return new DeviceRow(
                rs.getBytes("device_code_hash"),
                rs.getString("user_code"),
                rs.getString("client_id"),
                ScopeSet.column(rs.getString("scopes")),
                rs.getString("principal_id"),
                rs.getString("status"),
                rs.getInt("interval_seconds"),
                Sql.instant(rs, "last_poll_at"),
                Sql.instant(rs, "expires_at"),
                Authentication.fromColumns(Sql.instant(rs, "auth_time"), rs.getString("amr")));
    }

    private static final String DEVICE_COLUMNS =
            "device_code_hash, user_code, client_id, scopes, principal_id, status, "
                    + "interval_seconds, last_poll_at, expires_at, auth_time, amr";

    /** A pending device request by its user code, for the verification page; 404 when unknown or expired. */
    DeviceRow pendingDevice(String userCode) {
        return sql.one(
                        "SELECT " + DEVICE_COLUMNS
                                + " FROM oauth_device_codes WHERE user_code = ? AND status = 'pending' "
                                + "AND expires_at > now()",
                        DeviceFlow::deviceRow,
                        UserCodes.normalize(userCode))
                .orElseThrow(() -> ApiException.notFound("no pending device request has this code"));
    }

    void decideDevice(String principalId, Authentication signedIn, String userCode, boolean approve) {
        DeviceRow row = pendingDevice(userCode);
        int n = sql.tx(c -> {
            int changed = Sql.update(
                    c,
                    "UPDATE oauth_device_codes SET status = ?, principal_id = ?, auth_time = ?, amr = ? "
                            + "WHERE device_code_hash = ? AND status = 'pending'",
                    approve ? "approved" : "denied",
                    principalId,
                    signedIn.at(),
                    signedIn.amrColumn(),
                    row.hash());
            if (changed == 1 && approve) {
                consents.consent(c, principalId, row.clientId(), row.scopes());
            }
            return changed;
        });
        if (n != 1) {
            throw ApiException.notFound("no pending device request has this code");
        }
        audit.audit(
                principalId,
                row.clientId(),
                approve ? "device_authorization_granted" : "device_authorization_denied",
                ScopeSet.join(row.scopes()));
    }

    Map<String, Object> deviceGrant(String issuer, Client client, Map<String, String> p) {
        byte[] hash = Digests.sha256(TokenGrants.required(p, "device_code"));
        DeviceRow row = sql.one(
                        "SELECT " + DEVICE_COLUMNS + " FROM oauth_device_codes WHERE device_code_hash = ?",
                        DeviceFlow::deviceRow,
                        (Object) hash)
                .filter(r -> r.clientId().equals(client.clientId()))
                .orElseThrow(() -> OAuthError.invalidGrant("unknown device_code"));
        if (row.expiresAt().isBefore(Instant.now())) {
            throw new OAuthError("expired_token", "the device code has expired", 400);
        }
        Instant now = Instant.now();
        sql.update("UPDATE oauth_device_codes SET last_poll_at = now() WHERE device_code_hash = ?", (Object) hash);
        switch (row.status()) {
            case "denied" -> throw new OAuthError("access_denied", "the user denied the request", 400);
            case "used" -> throw OAuthError.invalidGrant("the device code was already used");
            case "pending" -> {
                if (row.lastPollAt() != null
                        && row.lastPollAt().plusSeconds(row.interval()).isAfter(now.plusMillis(250))) {
                    throw new OAuthError("slow_down", "poll at most every " + row.interval() + " seconds", 400);
                }
                throw new OAuthError("authorization_pending", "the user has not decided yet", 400);
            }
            default -> {
                // approved
            }
        }
        if (sql.update(
                        "UPDATE oauth_device_codes SET status = 'used' WHERE device_code_hash = ? AND status = 'approved'",
                        (Object) hash)
                != 1) {
            throw OAuthError.invalidGrant("the device code was already used");
        }
        grants.requireActive(row.principalId());
        boolean refresh = client.grantTypes().contains("refresh_token");
        return grants.issue(
                issuer,
                client,
                row.principalId(),
                row.scopes(),
                Ids.random("fam_", 20),
                refresh,
                null,
                row.authentication(),
                "device_code_exchanged");
    }
}
