package dev.atrium.deploy.workerd.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

@ObjectClassDefinition(name = "Atrium workerd deployment provider")
public @interface WorkerdConfig {

    /** Where {@code npm install --prefix ~/.cache/atrium/workerd-1.20261117.1 workerd@1.20261117.1} puts the binary. */
    String DEFAULT_BINARY = "~/.cache/atrium/workerd-" + WorkerdRuntime.WORKERD_VERSION
            + "/node_modules/@cloudflare/workerd-linux-64/bin/workerd";

    @AttributeDefinition(
            description = "The workerd binary (ATRIUM_WORKERD_BIN); when it does not exist, 'workerd' on the PATH")
    String binary() default DEFAULT_BINARY;

    @AttributeDefinition(
            description =
                    "The data directory (--data, ATRIUM_DATA); workerd's configurations live in its deploy-workerd/")
    String dataDirectory() default "data";

    @AttributeDefinition(
            description =
                    "How long a replaced workerd process keeps serving requests already sent to it before it is stopped (ms)")
    long drainGraceMillis() default 5000;

    @AttributeDefinition(description = "The compatibility date of a deployment that gives none")
    String compatibilityDate() default WorkerdRuntime.DEFAULT_COMPATIBILITY_DATE;

    @AttributeDefinition(description = "How long a new workerd process may take until every worker answers (s)")
    int startTimeoutSeconds() default 30;

    @AttributeDefinition(description = "Log lines kept per service")
    int logLinesPerService() default 10000;
}
