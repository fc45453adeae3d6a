package dev.atrium.streams.api;

/**
 * One server-sent event as a client reads it from another server's event stream.
 *
 * @param name the {@code event} field, {@code message} when the event has none
 * @param data the {@code data} lines, joined by a newline
 * @param id   the {@code id} field, or null
 */
public record ServerSentEvent(String name, String data, String id) {}
