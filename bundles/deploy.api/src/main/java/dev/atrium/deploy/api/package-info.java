/**
 * The deployment-provider SPI: how a bundle runs the deployments of services.
 *
 * <p>The {@code services} capability owns services, their deployments, settings, env, bindings and routing. It hands
 * a {@link dev.atrium.deploy.api.DeploymentProvider} the <em>whole desired state</em> of what that provider should run
 * ({@link dev.atrium.deploy.api.DeploymentProvider#apply}) and asks it where a running deployment listens
 * ({@link dev.atrium.deploy.api.DeploymentProvider#endpoint}); it proxies requests there itself, choosing per request
 * between a service's current and canary deployment. A provider therefore never sees Principals, tokens or hosts.
 *
 * <p>A provider is an OSGi service registered with the properties
 * {@value dev.atrium.deploy.api.DeploymentProvider#NAME} (its name, e.g. {@code workerd}) and
 * {@value dev.atrium.deploy.api.DeploymentProvider#KIND} (the artifact kinds it runs, e.g. {@code worker-bundle}).
 * When no provider runs a kind, deployments of that kind are refused naming the missing provider.
 */
@org.osgi.annotation.versioning.Version("1.2.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.deploy.api;
