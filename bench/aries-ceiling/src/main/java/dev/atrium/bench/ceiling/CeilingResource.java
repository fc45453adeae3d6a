package dev.atrium.bench.ceiling;

import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;

/** The one-line resource: the same bytes on every request, as application/json (CXF's byte[] provider writes them). */
@Path("ceiling")
public class CeilingResource {

    private final byte[] body;

    CeilingResource(byte[] body) {
        this.body = body;
    }

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public byte[] get() {
        return body;
    }
}
