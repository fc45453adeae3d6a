/**
 * Live streams of a capability's ordered events: {@link dev.atrium.streams.api.EventStreams} opens a
 * {@link dev.atrium.streams.api.StreamHub} for a {@link dev.atrium.streams.api.Feed} (the capability's table of events,
 * each with a dense position in its stream), which serves Server-Sent Events and WebSockets, replays from a cursor
 * ({@code Last-Event-ID}), drops a client that reads too slowly (it resumes), and hears events appended by other
 * instances through the kernel's listening connection. Runs and notifications use it; so should every later stream
 * (Actions logs, pull-request events, rollouts). The other direction too: {@link
 * dev.atrium.streams.api.EventStreams#reader} reads another server's event stream (model providers, MCP servers).
 */
@org.osgi.annotation.versioning.Version("1.1.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.streams.api;
