package dev.atrium.actions.internal;

import dev.atrium.repos.api.PushCheck;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry.RefChange;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.eclipse.jgit.lib.ObjectId;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Refuses a push of a branch or tag that adds or changes a workflow file that does not parse, naming the file, the
 * line and what is wrong: a mistake is seen by the pusher at once, not in a failed run later. Runner labels are not
 * checked here (images come and go); a run of a label no runner has fails saying so.
 */
@Component(service = PushCheck.class)
public class WorkflowPushCheck implements PushCheck {

    private final WorkflowFiles files;

    @Activate
    public WorkflowPushCheck(@Reference WorkflowFiles files) {
        this.files = files;
    }

    @Override
    public String problem(Repository repository, org.eclipse.jgit.lib.Repository db, RefChange change) {
        if (!change.ref().startsWith("refs/heads/") && !change.ref().startsWith("refs/tags/")) {
            return null;
        }
        // only what this push changes, against the branch it moves (a new one: against the default branch), so a
        // repository that already holds a workflow Atrium refuses (an import from GitHub) still takes pushes
        String base = change.oldId();
        if (ObjectId.zeroId().name().equals(base)) {
            base = files.headOf(db, repository.defaultBranch());
        }
        Map<String, String> found = files.changed(db, base, change.newId());
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, String> f : found.entrySet()) {
            try {
                files.parseAnyLabel(f.getKey(), f.getValue());
            } catch (dev.atrium.actions.internal.workflow.WorkflowException e) {
                problems.add(e.getMessage());
            }
        }
        if (problems.isEmpty()) {
            return null;
        }
        return "invalid workflow: " + String.join("; ", problems);
    }
}
