/**
 * The federation core's services, which the store models ({@code store.inventory}, {@code store.pullonly}) and the
 * store-registry client use: {@link dev.atrium.store.ap.api.ActivityMedia} (media types and contexts),
 * {@link dev.atrium.store.ap.api.ActorKeys} (a key pair per local actor), {@link dev.atrium.store.ap.api.HttpSignatures}
 * (draft-cavage signatures as Mastodon and Fedify speak them), {@link dev.atrium.store.ap.api.RemoteDocuments} (fetches
 * through the kernel's egress guard) and {@link dev.atrium.store.ap.api.Deliveries} (the outgoing queue).
 */
@org.osgi.annotation.versioning.Version("1.2.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.store.ap.api;
