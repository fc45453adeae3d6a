package dev.atrium.kernel.internal.rest;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OperatorOnly;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.internal.audit.KernelAuditLog;
import dev.atrium.kernel.internal.audit.KeysetCursor;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.MediaType;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The operator's audit log: admin actions and sign-ins, newest first. */
@Component(service = AdminAuditResource.class)
@KernelResource
@Path("/admin/audit")
@Produces(MediaType.APPLICATION_JSON)
@OperatorOnly
public class AdminAuditResource {

    private static final int MAX_FILTER = 200;

    private final KernelAuditLog audit;

    @Activate
    public AdminAuditResource(@Reference KernelAuditLog audit) {
        this.audit = audit;
    }

    @GET
    @JsonShape(KernelJson.AuditPage.class)
    public Map<String, Object> list(
            @QueryParam("limit") String limit,
            @QueryParam("cursor") String cursor,
            @QueryParam("actor") String actor,
            @QueryParam("action") String action) {
        KernelAuditLog.Page page = audit.list(
                filter("actor", actor),
                filter("action", action),
                KeysetCursor.parse(cursor),
                PageRequest.of(limit, null).limit());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put(
                "entries",
                page.entries().stream().map(KernelAuditLog.Entry::toJson).toList());
        body.put("next_cursor", page.nextCursor());
        return body;
    }

    private static String filter(String name, String value) {
        NulText.reject(name, value);
        if (value == null || value.isBlank()) {
            return null;
        }
        if (value.length() > MAX_FILTER) {
            throw ApiException.badRequest(name + " must be at most " + MAX_FILTER + " characters");
        }
        return value.trim();
    }
}
