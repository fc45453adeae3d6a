package dev.atrium.threads.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.threads.api.Threads;
import dev.atrium.threads.internal.ThreadStore.StoredMessage;
import dev.atrium.threads.internal.ThreadStore.Thread;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@link Threads} for other capabilities, and the owner-scope lookup every by-id route of this bundle uses. */
@Component(service = {Threads.class, ThreadsService.class})
public class ThreadsService implements Threads {

    static final String NOT_FOUND = "thread not found";
    static final Set<String> ROLES = Set.of("user", "assistant", "system");

    private final OwnerScope ownerScope;
    private final ThreadStore store;

    @Activate
    public ThreadsService(@Reference OwnerScope ownerScope, @Reference ThreadStore store) {
        this.ownerScope = ownerScope;
        this.store = store;
    }

    /** The thread, when the caller owns its workspace; a stranger gets the same 404 as a missing id. */
    Thread owned(Caller caller, String id) {
        Thread t = store.get(id).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        try {
            ownerScope.require(caller, t.spaceId());
        } catch (ApiException e) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return t;
    }

    /** A {@link ThreadRef} this service made in {@link #require}: the only kind its other methods accept. */
    private record ProvenThread(String id, String spaceId, String title) implements ThreadRef {}

    @Override
    public ThreadRef require(Caller caller, String threadId) {
        Thread t = owned(caller, threadId);
        return new ProvenThread(t.id(), t.spaceId(), t.title());
    }

    /** The id of a reference this service proved; any other reference is answered as a missing thread. */
    private static String proven(ThreadRef thread) {
        if (thread instanceof ProvenThread p) {
            return p.id();
        }
        throw ApiException.notFound(NOT_FOUND);
    }

    @Override
    public List<Message> messagesAfter(ThreadRef thread, java.time.Instant afterCreatedAt, String afterId, int limit) {
        return store.messagesAfter(proven(thread), afterCreatedAt, afterId, limit).stream()
                .map(StoredMessage::message)
                .toList();
    }

    /** The context budget of a thread without a {@code context_window}, in estimated tokens. */
    static final long DEFAULT_CONTEXT_TOKENS = 100_000;
    /** System messages a model sees at most (the newest of them). */
    static final int MAX_SYSTEM_MESSAGES = 50;

    @Override
    public List<Message> context(ThreadRef thread, int maxMessages) {
        String threadId = proven(thread);
        Thread t = store.get(threadId).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        long budget = 4 * (t.contextWindow() == null ? DEFAULT_CONTEXT_TOKENS : t.contextWindow());
        List<Message> system = new ArrayList<>();
        store.newestMessages(threadId, Long.MAX_VALUE, true, MAX_SYSTEM_MESSAGES)
                .forEach(m -> system.add(0, m.message()));
        long used = system.stream().mapToLong(m -> m.content().length()).sum();
        List<Message> picked = new ArrayList<>();
        long before = Long.MAX_VALUE;
        pages:
        while (picked.size() < maxMessages) {
            int want = Math.min(200, maxMessages - picked.size());
            List<StoredMessage> page = store.newestMessages(threadId, before, false, want);
            for (StoredMessage m : page) {
                long size = m.message().content().length();
                if (!picked.isEmpty() && used + size > budget) {
                    break pages;
                }
                picked.add(m.message());
                used += size;
            }
            if (page.size() < want) {
                break;
            }
            before = page.get(page.size() - 1).seq();
        }
        java.util.Collections.reverse(picked);
        // a conversation a model accepts starts with the user's turn
        while (picked.size() > 1 && !"user".equals(picked.get(0).role())) {
            picked.remove(0);
        }
        List<Message> out = new ArrayList<>(system);
        out.addAll(picked);
        return out;
    }

    @Override
    public Message append(ThreadRef thread, String role, String content, String runId) {
        String threadId = proven(thread);
        if (!ROLES.contains(role)) {
            throw ApiException.badRequest("role must be one of assistant, system, user");
        }
        return store.append(threadId, role, content, runId).message();
    }
}
