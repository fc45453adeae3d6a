package dev.atrium.agenttasks.internal;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Operator configuration of agent tasks (ConfigAdmin pid {@code dev.atrium.agenttasks}); where the operator's
 * configuration sets nothing, the {@code ATRIUM_*} environment variable named in a description supplies the value
 * (bundles/config).
 */
@Component(
        service = AgentTasksSettings.class,
        configurationPid = "dev.atrium.agenttasks",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = AgentTasksSettings.Config.class)
public class AgentTasksSettings {

    @ObjectClassDefinition(name = "Atrium agent tasks")
    public @interface Config {
        @AttributeDefinition(
                description = "Seconds the model may take to answer a plan request (ATRIUM_AGENT_TASKS_PLAN_TIMEOUT_S)")
        long planTimeoutSeconds() default 120;

        @AttributeDefinition(
                description = "Seconds between looks at tasks whose run's end was not heard of "
                        + "(ATRIUM_AGENT_TASKS_RECONCILE_S)")
        long reconcileSeconds() default 60;

        @AttributeDefinition(
                description =
                        "Provider for workspaces that chose no model, as runs uses (ATRIUM_RUNS_DEFAULT_PROVIDER)")
        String defaultProvider() default "";

        @AttributeDefinition(
                description = "Model for workspaces that chose no model, as runs uses (ATRIUM_RUNS_DEFAULT_MODEL)")
        String defaultModel() default "";
    }

    final long planTimeoutSeconds;
    final long reconcileSeconds;
    final String defaultProvider;
    final String defaultModel;

    @Activate
    public AgentTasksSettings(Config config) {
        planTimeoutSeconds = Math.max(1, config.planTimeoutSeconds());
        reconcileSeconds = Math.max(1, config.reconcileSeconds());
        defaultProvider = config.defaultProvider().trim();
        defaultModel = config.defaultModel().trim();
    }
}
