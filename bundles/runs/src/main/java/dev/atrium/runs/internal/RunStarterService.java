package dev.atrium.runs.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Callers;
import dev.atrium.runs.api.RunStarter;
import dev.atrium.threads.api.Threads;
import dev.atrium.threads.api.Threads.ThreadRef;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@link RunStarter}: the run a reminder asks for, made as {@link ThreadRunsResource} makes one, for a caller the kernel
 * makes again for the Principal ({@link Callers#actingFor}, which only this bundle may ask), so a suspended Principal or
 * a thread outside its workspaces gets the same 404 as over HTTP.
 */
@Component(service = RunStarter.class)
public class RunStarterService implements RunStarter {

    private final Callers callers;
    private final Threads threads;
    private final RunStore store;

    @Activate
    public RunStarterService(@Reference Callers callers, @Reference Threads threads, @Reference RunStore store) {
        this.callers = callers;
        this.threads = threads;
        this.store = store;
    }

    @Override
    public String start(String principalId, String spaceId, String threadId, String input) {
        if (input == null || input.isBlank() || input.length() > 100_000) {
            throw ApiException.badRequest("input must be 1-100000 characters");
        }
        Caller caller = callers.actingFor(principalId, Dispatcher.RUN_SCOPES);
        ThreadRef thread = threads.require(caller, threadId);
        if (!thread.spaceId().equals(spaceId)) {
            throw ApiException.notFound("thread not found");
        }
        threads.append(thread, "user", input, null);
        return store.create(thread.id(), thread.spaceId(), principalId, null, null)
                .id();
    }

    @Override
    public Optional<String> status(String principalId, String runId) {
        if (principalId == null || runId == null) {
            return Optional.empty();
        }
        return store.get(runId)
                .filter(run -> principalId.equals(run.requester()))
                .map(RunStore.Run::status);
    }
}
