/**
 * What other capabilities use of the notifications capability: {@link dev.atrium.notifications.api.Notifications}, a
 * service that posts a {@link dev.atrium.notifications.api.Notice} to a Principal. Users import this package with
 * {@code resolution:=optional} and reference the service optionally and dynamically: while the notifications
 * capability is disabled there is no service, and posting is simply not done.
 */
@org.osgi.annotation.versioning.Version("1.0.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.notifications.api;
