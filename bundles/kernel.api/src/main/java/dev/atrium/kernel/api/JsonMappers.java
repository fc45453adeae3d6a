package dev.atrium.kernel.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * The one configuration of the Jackson mappers of Atrium's bundles: a change to how the server reads or writes JSON is
 * made here, for every bundle at once.
 *
 * <p>Each class or component that needs a mapper makes its own with {@link #create()}; none is shared across bundles.
 * A mapper caches serializers and types by class, so one shared with a bundle that is updated would keep the old
 * revision's classes, and with them its class loader, reachable.
 */
public final class JsonMappers {

    private JsonMappers() {}

    /** A new mapper with the server's configuration: Jackson's defaults today, which every bundle was written for. */
    public static ObjectMapper create() {
        return JsonMapper.builder().build();
    }
}
