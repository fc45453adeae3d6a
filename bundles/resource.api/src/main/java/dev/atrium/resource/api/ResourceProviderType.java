package dev.atrium.resource.api;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.osgi.service.component.annotations.ComponentPropertyType;

/**
 * The service properties of a {@link ResourceProvider}, as a component property type:
 * {@code @Component(service = ResourceProvider.class) @ResourceProviderType(type = "kv", backend = "files")} gives the
 * component {@value ResourceProvider#TYPE} and {@value ResourceProvider#BACKEND}, spelled once by the compiler.
 * <p>
 * The core registers a provider of a type it knows only if the provider implements that type's facet ({@code kv}:
 * {@link KvFacet}, {@code r2}: {@link ObjectFacet}, {@code d1}: {@link SqlFacet}, {@code queue}: {@link QueueFacet},
 * {@code vectorize}: {@link VectorFacet}, {@code analyticsEngine}: {@link AnalyticsFacet}, {@code secretRef}:
 * {@link SecretFacet}, {@code workflow}: {@link WorkflowFacet}); one that does not is refused when it registers, with
 * a log line saying which facet it lacks, not when its first request arrives.
 */
@ComponentPropertyType
@Retention(RetentionPolicy.CLASS)
@Target(ElementType.TYPE)
public @interface ResourceProviderType {

    /** Makes the elements {@code atrium.resource.type} and {@code atrium.resource.backend}. */
    String PREFIX_ = "atrium.resource.";

    /** The resource type served ({@value ResourceProvider#TYPE}). */
    String type();

    /** The backend's short name ({@value ResourceProvider#BACKEND}), 1–40 of {@code [a-z0-9-]}. */
    String backend();
}
