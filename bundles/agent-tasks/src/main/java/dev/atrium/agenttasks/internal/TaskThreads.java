package dev.atrium.agenttasks.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.threads.api.Threads;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Checks that a task's {@code thread_id} names a thread of the task's workspace, through threads.api (which proves
 * the caller owns it). Optional and dynamic: with the threads capability disabled, tasks without a thread still work.
 */
@Component(service = TaskThreads.class)
public class TaskThreads {

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile Threads threads;

    /** 400 unless {@code threadId} is a thread of {@code space} the caller owns (a stranger's reads as missing). */
    void require(Caller caller, SpaceRef space, String threadId) {
        Threads t = threads;
        if (t == null) {
            throw ApiException.unavailable("the threads capability is disabled; thread_id cannot be checked");
        }
        Threads.ThreadRef ref;
        try {
            ref = t.require(caller, threadId);
        } catch (ApiException e) {
            if (e.status() == 404) {
                throw notInSpace();
            }
            throw e;
        }
        if (!ref.spaceId().equals(space.id())) {
            throw notInSpace();
        }
    }

    private static ApiException notInSpace() {
        return ApiException.badRequest("thread_id names no thread of this workspace");
    }
}
