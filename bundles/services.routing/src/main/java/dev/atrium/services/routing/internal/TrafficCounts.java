package dev.atrium.services.routing.internal;

import dev.atrium.services.api.DeploymentTraffic;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Requests and server errors per running deployment, counted as the router answers them; bounded by the routes. */
final class TrafficCounts implements DeploymentTraffic {

    private record Adders(LongAdder requests, LongAdder errors) {}

    private final Map<String, Adders> byRuntime = new ConcurrentHashMap<>();

    void count(String runtimeId, boolean serverError) {
        Adders a = byRuntime.computeIfAbsent(runtimeId, id -> new Adders(new LongAdder(), new LongAdder()));
        a.requests().increment();
        if (serverError) {
            a.errors().increment();
        }
    }

    /** Forgets deployments that no longer run, so the map holds only what the routing table names. */
    void retain(java.util.Set<String> running) {
        byRuntime.keySet().retainAll(running);
    }

    @Override
    public Counts counts(String runtimeId) {
        Adders a = byRuntime.get(runtimeId);
        return a == null
                ? Counts.NONE
                : new Counts(a.requests().sum(), a.errors().sum());
    }
}
