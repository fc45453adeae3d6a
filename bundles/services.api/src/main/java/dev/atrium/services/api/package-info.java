/**
 * What the services capability tells the bundles that carry its traffic: {@link dev.atrium.services.api.ServiceRoutes},
 * the routing table of running deployments, their deployment providers and each deployment's binding secret. The
 * services bundle keeps the desired state and makes it run; Host routing and the binding gateway read it from here.
 */
@org.osgi.annotation.versioning.Version("1.0.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.services.api;
