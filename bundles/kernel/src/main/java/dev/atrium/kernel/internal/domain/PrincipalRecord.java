package dev.atrium.kernel.internal.domain;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;

/** A Principal row as the kernel reads it. */
public record PrincipalRecord(
        String id,
        String provider,
        String subject,
        String username,
        String name,
        String email,
        String picture,
        String status,
        boolean setupCompleted,
        boolean autoUpdateEnabled,
        boolean privateAccount,
        String activityVisibility) {

    public static final String COLUMNS =
            "id, provider, subject, username, name, email, picture, status, setup_completed, "
                    + "auto_update_enabled, private_account, activity_visibility";

    public static PrincipalRecord of(ResultSet rs) throws SQLException {
        return new PrincipalRecord(
                rs.getString("id"),
                rs.getString("provider"),
                rs.getString("subject"),
                rs.getString("username"),
                rs.getString("name"),
                rs.getString("email"),
                rs.getString("picture"),
                rs.getString("status"),
                rs.getBoolean("setup_completed"),
                rs.getBoolean("auto_update_enabled"),
                rs.getBoolean("private_account"),
                rs.getString("activity_visibility"));
    }

    /** The spec's current-user body. */
    public Map<String, Object> toMe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("email", email);
        m.put("name", name);
        m.put("username", username);
        m.put("picture", picture);
        m.put("setup_completed", setupCompleted);
        return m;
    }

    public Map<String, Object> toSettings() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("setup_completed", setupCompleted);
        m.put("auto_update_enabled", autoUpdateEnabled);
        m.put("private_account", privateAccount);
        m.put("activity_visibility", activityVisibility);
        return m;
    }
}
