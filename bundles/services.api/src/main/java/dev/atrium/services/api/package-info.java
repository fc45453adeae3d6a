/**
 * What the services capability tells the bundles that carry its traffic: {@link dev.atrium.services.api.ServiceRoutes},
 * the routing table of running deployments, their deployment providers and each deployment's binding secret;
 * {@link dev.atrium.services.api.ServiceDomains}, the services' custom domains; and the {@link
 * dev.atrium.services.api.RoutesListener} whiteboard. The services bundle keeps the desired state and makes it run;
 * Host routing, the binding gateway and the custom domains' bundle read it from here.
 */
@org.osgi.annotation.versioning.Version("1.4.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.services.api;
