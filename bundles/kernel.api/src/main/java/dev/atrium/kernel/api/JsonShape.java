package dev.atrium.kernel.api;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The JSON a resource method takes (on its body parameter) or answers (on the method) where the Java type does not say
 * it, as with {@code JsonNode}, {@code Map} or {@code Response}: a record whose components are the fields, named as
 * Jackson writes them ({@code @JsonProperty} on a component renames it). The API reference ({@code /api/openapi.json})
 * describes the body with it; the code goes on reading the body as it likes, and checking it.
 *
 * @since 2.9
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.PARAMETER, ElementType.METHOD})
public @interface JsonShape {

    /** The record the JSON has the shape of. */
    Class<? extends Record> value();
}
