package dev.atrium.runs.internal;

import dev.atrium.billing.api.BillingGate;
import dev.atrium.billing.api.Meters;
import dev.atrium.billing.api.UsageEvent;
import dev.atrium.billing.api.UsageRecorder;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Callers;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.WorkspaceModels;
import dev.atrium.runs.api.AgentTool;
import dev.atrium.runs.api.ModelProvider;
import dev.atrium.runs.api.ModelProvider.Message;
import dev.atrium.runs.api.ModelProvider.Reply;
import dev.atrium.runs.api.ModelProvider.ToolCall;
import dev.atrium.runs.internal.RunStore.Run;
import dev.atrium.threads.api.Threads;
import dev.atrium.threads.api.Threads.ThreadRef;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes queued runs from PostgreSQL ({@code FOR UPDATE SKIP LOCKED}, so several instances share one queue) and runs
 * the agent loop. Fail closed: a run without a recorded requester is never claimed; the requester Principal and its
 * owner witness are proven again through the kernel before the run starts and before every tool call, and the run
 * fails with a reason when either became invalid.
 */
@Component(service = Dispatcher.class, immediate = true)
public class Dispatcher {

    private static final Logger LOG = LoggerFactory.getLogger(Dispatcher.class);
    static final String SYSTEM_PROMPT = "You are the assistant of an Atrium workspace. Use the tools when they help.";
    /** Thread messages a model turn sees at most; the thread's context_window may make it fewer. */
    static final int MAX_CONTEXT_MESSAGES = 1_000;

    private final RunStore store;
    private final EventHub hub;
    private final RunsSettings settings;
    /**
     * What a run may do as its requester: read and write threads. The kernel makes the caller for the recorded
     * requester (auth method {@code run}); its owner scope proves it again every time the run starts or calls a tool.
     */
    static final Set<String> RUN_SCOPES = Set.of("threads:read", "threads:write");

    private final OwnerScope ownerScope;
    private final Callers callers;
    private final WorkspaceModels models;
    private final Threads threads;
    private final ToolExecutor tools;
    private final Map<String, ModelProvider> providers = new ConcurrentHashMap<>();
    /** The workspace's skills for the system prompt (optional: a run goes on without them). */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile RunSkills runSkills;

    /** Where the tokens of each turn are counted; absent while billing is not installed. */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile UsageRecorder usage;

    /** Asked before each model turn; absent while billing is not installed (everything is allowed). */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile BillingGate gate;

    private final Map<String, Thread> active = new ConcurrentHashMap<>();
    private final Set<String> cancelled = ConcurrentHashMap.newKeySet();
    /** Runs this instance claimed and whose worker has not ended yet. */
    private final Set<String> owned = ConcurrentHashMap.newKeySet();
    /** Runs the sweeper found running here without a worker; failed when seen so twice. */
    private final Set<String> suspects = ConcurrentHashMap.newKeySet();

    private final java.util.concurrent.ScheduledExecutorService sweeper = NamedThreads.scheduler("atrium-runs-sweeper");
    private final ExecutorService workers;
    private final ExecutorService modelCalls = Executors.newCachedThreadPool(NamedThreads.factory("atrium-run-model"));
    private final Semaphore slots;
    private final Object wake = new Object();
    private final Thread loop;
    private final Runnable onQueued = this::wake;
    private final Consumer<String> onCancel = this::cancelLocal;
    private volatile boolean running = true;

    @Activate
    public Dispatcher(
            @Reference RunStore store,
            @Reference EventHub hub,
            @Reference RunsSettings settings,
            @Reference OwnerScope ownerScope,
            @Reference WorkspaceModels models,
            @Reference Threads threads,
            @Reference ToolExecutor tools,
            @Reference Callers callers) {
        this.store = store;
        this.callers = callers;
        this.hub = hub;
        this.settings = settings;
        this.ownerScope = ownerScope;
        this.models = models;
        this.threads = threads;
        this.tools = tools;
        this.workers =
                Executors.newFixedThreadPool(Math.max(1, settings.workers), NamedThreads.factory("atrium-run-worker"));
        this.slots = new Semaphore(settings.workers);
        hub.onQueued(onQueued);
        hub.onCancel(onCancel);
        this.loop = new Thread(this::dispatch, "atrium-runs-dispatcher");
        loop.setDaemon(true);
        if (settings.workers > 0) {
            loop.start();
        }
        NamedThreads.repeat(sweeper, this::sweep, Duration.ofSeconds(10), Duration.ofSeconds(10));
    }

    /**
     * Runs marked running on this instance that no worker of it executes (the end could not be recorded, e.g. the
     * database was briefly unreachable) fail once seen so on two sweeps in a row.
     */
    void sweep() {
        try {
            Set<String> seen = new java.util.HashSet<>();
            for (String runId : store.runningOn(hub.instanceId)) {
                if (owned.contains(runId)) {
                    continue;
                }
                seen.add(runId);
                if (suspects.contains(runId) && !owned.contains(runId)) {
                    if (store.finish(runId, "failed", "the run's worker ended without recording its end")) {
                        LOG.warn("run {} was running here without a worker; marked failed", runId);
                    }
                }
            }
            suspects.clear();
            suspects.addAll(seen);
        } catch (RuntimeException e) {
            LOG.debug("sweeping runs failed", e);
        }
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void addProvider(ModelProvider p) {
        providers.put(p.name(), p);
    }

    void removeProvider(ModelProvider p) {
        providers.remove(p.name(), p);
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        running = false;
        hub.removeListeners(onQueued, onCancel);
        wake();
        loop.interrupt();
        loop.join(5_000);
        sweeper.shutdownNow();
        workers.shutdownNow();
        modelCalls.shutdownNow();
        workers.awaitTermination(10, TimeUnit.SECONDS);
        for (String runId : store.runningOn(hub.instanceId)) {
            store.finish(runId, "failed", "the server stopped while the run was running");
        }
    }

    void wake() {
        synchronized (wake) {
            wake.notifyAll();
        }
    }

    void cancelLocal(String runId) {
        Thread t = active.get(runId);
        if (t != null) {
            cancelled.add(runId);
            t.interrupt();
        }
    }

    private void dispatch() {
        while (running) {
            try {
                slots.acquire();
                Optional<Run> claimed = Optional.empty();
                try {
                    if (hub.connected()) {
                        claimed = store.claim(hub.instanceId);
                    }
                } catch (RuntimeException e) {
                    LOG.warn("claiming a queued run failed", e);
                }
                if (claimed.isEmpty()) {
                    slots.release();
                    synchronized (wake) {
                        wake.wait(settings.pollMillis);
                    }
                    continue;
                }
                Run run = claimed.get();
                owned.add(run.id());
                workers.execute(() -> {
                    active.put(run.id(), Thread.currentThread());
                    try {
                        execute(run);
                    } catch (Throwable t) {
                        // an Error, or the store failing while recording the end: the run must not stay running
                        LOG.error("run {} failed", run.id(), t);
                        try {
                            store.finish(run.id(), "failed", "internal error");
                        } catch (Throwable again) {
                            LOG.warn("recording the end of run {} failed; the sweeper will", run.id(), again);
                        }
                    } finally {
                        owned.remove(run.id());
                        active.remove(run.id());
                        cancelled.remove(run.id());
                        Thread.interrupted();
                        slots.release();
                        wake();
                    }
                });
            } catch (InterruptedException e) {
                return;
            } catch (java.util.concurrent.RejectedExecutionException e) {
                return;
            }
        }
    }

    /** A run stops with this reason. */
    static final class Stop extends Exception {
        private static final long serialVersionUID = 1L;
        final String status;

        Stop(String status, String reason) {
            super(reason, null, false, false);
            this.status = status;
        }
    }

    /** The run's workspace and thread, proven for its requester. */
    record Proven(SpaceRef space, ThreadRef thread) {}

    /** Proves the requester again through the kernel; the workspace it returns says which grants the run holds. */
    Proven verify(Run run) throws Stop {
        if (run.requester() == null) {
            throw new Stop("failed", "the run has no recorded requester");
        }
        try {
            Caller caller = callers.actingFor(run.requester(), RUN_SCOPES);
            SpaceRef space = ownerScope.require(caller, run.spaceId());
            return new Proven(space, threads.require(caller, run.threadId()));
        } catch (ApiException e) {
            throw new Stop(
                    "failed",
                    "the requester may no longer act in this workspace (Principal, workspace or owner witness no "
                            + "longer valid, or the thread is gone)");
        }
    }

    private WorkspaceModels.Choice model(Run run) throws Stop {
        try {
            return models.model(callers.actingFor(run.requester(), RUN_SCOPES), run.spaceId());
        } catch (ApiException e) {
            throw new Stop("failed", "the requester may no longer act in this workspace");
        }
    }

    private void checkCancel(Run run) throws Stop {
        if (cancelled.contains(run.id())) {
            throw new Stop("cancelled", null);
        }
        Optional<Run> now = store.get(run.id());
        if (now.isEmpty() || now.get().cancelRequested()) {
            throw new Stop("cancelled", null);
        }
        if (!ours(now.get())) {
            // finished (e.g. failed by a reaper) or taken over: stop working on it; finish() leaves a terminal run
            // alone
            throw new Stop("failed", "the run is no longer running on this instance");
        }
    }

    private boolean ours(Run now) {
        return "running".equals(now.status()) && hub.instanceId.equals(now.instanceId());
    }

    void execute(Run run) {
        try {
            Proven start = verify(run);
            SpaceRef space = start.space();
            WorkspaceModels.Choice choice = model(run);
            String providerName = first(run.provider(), choice.provider(), settings.defaultProvider);
            String model = first(run.model(), choice.model(), settings.defaultModel);
            if (providerName == null) {
                throw new Stop(
                        "failed",
                        "no model provider is configured for this workspace (PATCH /api/spaces/:spaceId/model)");
            }
            ModelProvider provider = providers.get(providerName);
            if (provider == null) {
                throw new Stop("failed", "unknown model provider '" + providerName + "'");
            }
            if (model == null) {
                throw new Stop(
                        "failed", "no model is configured for this workspace (PATCH /api/spaces/:spaceId/model)");
            }
            Set<String> grants = ToolExecutor.grants(space.securityPosture());
            List<Message> conversation = new ArrayList<>();
            StringBuilder system = new StringBuilder(SYSTEM_PROMPT);
            RunSkills withSkills = runSkills;
            String skills = withSkills == null ? "" : withSkills.forSpace(space);
            if (!skills.isEmpty()) {
                system.append("\n\n").append(skills);
            }
            for (Threads.Message m : threads.context(start.thread(), MAX_CONTEXT_MESSAGES)) {
                switch (m.role()) {
                    case "user" -> conversation.add(Message.user(m.content()));
                    case "assistant" -> conversation.add(Message.assistant(m.content(), List.of()));
                    default -> system.append("\n\n").append(m.content());
                }
            }
            if (conversation.isEmpty()) {
                throw new Stop("failed", "the thread has no message to answer");
            }
            store.append(run.id(), "run.model", Map.of("provider", providerName, "model", model));
            for (int step = 1; step <= settings.stepLimit; step++) {
                checkCancel(run);
                BillingGate g = gate;
                if (g != null) {
                    BillingGate.Decision d = g.check(space.id(), Meters.RUN_TOKENS_IN);
                    if (!d.allowed()) {
                        throw new Stop("failed", "payment required: " + d.reason());
                    }
                }
                List<ModelProvider.Tool> offered = tools.offered(
                        new AgentTool.Context(run.id(), run.threadId(), space.id(), run.requester(), grants));
                String runId = run.id();
                int s = step;
                Reply reply = callModel(
                        run,
                        provider,
                        new ModelProvider.Request(model, system.toString(), List.copyOf(conversation), offered, 4096),
                        delta -> {
                            if (cancelled.contains(runId)) {
                                throw new java.util.concurrent.CancellationException();
                            }
                            store.append(
                                    runId,
                                    RunStore.STREAMED,
                                    Map.of("text", NulText.clean(String.valueOf(delta)), "step", s));
                        });
                reply = sanitise(reply, step);
                meter(run, space, model, step, reply.usage());
                Map<String, Object> done = new LinkedHashMap<>();
                done.put("text", reply.text());
                done.put("step", step);
                done.put("stop_reason", reply.stopReason());
                store.append(run.id(), "message.completed", done);
                conversation.add(Message.assistant(reply.text(), reply.toolCalls()));
                if (reply.toolCalls().isEmpty()) {
                    if (reply.text() != null && !reply.text().isBlank()) {
                        threads.append(verify(run).thread(), "assistant", reply.text(), run.id());
                    }
                    store.finish(run.id(), "completed", null);
                    return;
                }
                for (ToolCall call : reply.toolCalls()) {
                    checkCancel(run);
                    SpaceRef proven = verify(run).space();
                    Set<String> now = ToolExecutor.grants(proven.securityPosture());
                    Map<String, Object> callEvent = new LinkedHashMap<>();
                    callEvent.put("id", call.id());
                    callEvent.put("name", call.name());
                    callEvent.put("arguments", call.arguments());
                    store.append(run.id(), "tool.call", callEvent);
                    ToolExecutor.Result result = tools.execute(
                            call, new AgentTool.Context(run.id(), run.threadId(), proven.id(), run.requester(), now));
                    String text = NulText.clean(result.text());
                    Map<String, Object> resultEvent = new LinkedHashMap<>();
                    resultEvent.put("id", call.id());
                    resultEvent.put("name", call.name());
                    resultEvent.put("result", text);
                    resultEvent.put("is_error", result.error());
                    store.append(run.id(), "tool.result", resultEvent);
                    conversation.add(Message.tool(call.id(), text));
                }
            }
            throw new Stop("failed", "the step limit of " + settings.stepLimit + " model turns was reached");
        } catch (Stop stop) {
            store.finish(run.id(), stop.status, stop.getMessage());
        } catch (InterruptedException e) {
            if (cancelled.contains(run.id()) || store.cancelRequested(run.id())) {
                store.finish(run.id(), "cancelled", null);
            } else {
                store.finish(run.id(), "failed", "the server stopped while the run was running");
            }
        } catch (IOException e) {
            if (cancelled.contains(run.id())) {
                store.finish(run.id(), "cancelled", null);
            } else {
                store.finish(run.id(), "failed", "model provider error: " + e.getMessage());
            }
        } catch (RuntimeException e) {
            LOG.error("run {} failed", run.id(), e);
            store.finish(run.id(), "failed", "internal error");
        }
    }

    /**
     * One model turn on a thread of its own, so that a cancel (NOTIFY, or the run row's flag looked at every second
     * as a fallback) ends the wait at once even while the provider's stream is stalled.
     */
    private Reply callModel(
            Run run, ModelProvider provider, ModelProvider.Request request, ModelProvider.Listener listener)
            throws IOException, InterruptedException, Stop {
        java.util.concurrent.Future<Reply> call = modelCalls.submit(() -> provider.complete(request, listener));
        long lastLook = System.nanoTime();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Math.max(1, settings.turnTimeoutSeconds));
        try {
            while (true) {
                try {
                    return call.get(200, TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.TimeoutException stillStreaming) {
                    if (System.nanoTime() - lastLook > TimeUnit.SECONDS.toNanos(1)) {
                        lastLook = System.nanoTime();
                        checkCancel(run);
                    }
                    if (cancelled.contains(run.id())) {
                        throw new Stop("cancelled", null);
                    }
                    if (System.nanoTime() > deadline) {
                        throw new Stop(
                                "failed",
                                "the model turn took longer than " + settings.turnTimeoutSeconds + " seconds");
                    }
                }
            }
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof java.util.concurrent.CancellationException || cancelled.contains(run.id())) {
                throw new Stop("cancelled", null);
            }
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof InterruptedException ie) {
                throw ie;
            }
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new IOException(cause);
        } finally {
            call.cancel(true);
        }
    }

    /**
     * The model's reply as the run may use it: U+0000 replaced (PostgreSQL cannot store it), and every tool call with
     * an id and a name (a malformed call gets a made-up id and an empty name, so that it is answered with an error
     * result instead of failing the run).
     */
    static Reply sanitise(Reply reply, int step) {
        List<ToolCall> calls = new ArrayList<>();
        int n = 0;
        for (ToolCall c : reply.toolCalls() == null ? List.<ToolCall>of() : reply.toolCalls()) {
            n++;
            if (c == null) {
                continue;
            }
            String id = c.id() == null || c.id().isBlank() ? "call_atrium_" + step + "_" + n : NulText.clean(c.id());
            String name = c.name() == null ? "" : NulText.clean(c.name());
            String arguments = c.arguments() == null ? "" : NulText.clean(c.arguments());
            calls.add(new ToolCall(id, name, arguments));
        }
        return new Reply(
                NulText.clean(reply.text() == null ? "" : reply.text()),
                List.copyOf(calls),
                reply.stopReason(),
                reply.usage());
    }

    /** Counts a turn's tokens; the keys make a turn counted once, whatever repeats the recording. */
    private void meter(Run run, SpaceRef space, String model, int step, ModelProvider.Usage tokens) {
        UsageRecorder recorder = usage;
        if (recorder == null) {
            return;
        }
        String key = "run:" + run.id() + ":" + step;
        if (tokens.inputTokens() > 0) {
            recorder.record(new UsageEvent(
                    space.id(), Meters.RUN_TOKENS_IN, model, tokens.inputTokens(), key + ":in", Instant.now()));
        }
        if (tokens.outputTokens() > 0) {
            recorder.record(new UsageEvent(
                    space.id(), Meters.RUN_TOKENS_OUT, model, tokens.outputTokens(), key + ":out", Instant.now()));
        }
    }

    private static String first(String... values) {
        for (String v : values) {
            if (v != null && !v.isBlank()) {
                return v;
            }
        }
        return null;
    }
}
