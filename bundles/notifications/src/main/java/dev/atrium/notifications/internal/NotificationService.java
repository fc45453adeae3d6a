package dev.atrium.notifications.internal;

import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.notifications.api.Notice;
import dev.atrium.notifications.api.Notifications;
import dev.atrium.notifications.internal.NotificationStore.Notification;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The {@link Notifications} service: there exactly while this capability runs. */
@Component(service = Notifications.class)
public class NotificationService implements Notifications {

    private final NotificationStore store;
    private final SpaceDirectory spaces;

    @Activate
    public NotificationService(@Reference NotificationStore store, @Reference SpaceDirectory spaces) {
        this.store = store;
        this.spaces = spaces;
    }

    @Override
    public Optional<String> post(Notice notice) {
        String principalId = notice.principalId();
        if (principalId == null) {
            // the workspace's owner, as the kernel knows it (empty when the workspace, its owner or witness is not
            // active)
            Optional<String> owner = spaces.byId(notice.spaceId()).map(SpaceRef::ownerPrincipalId);
            if (owner.isEmpty()) {
                return Optional.empty();
            }
            principalId = owner.get();
        }
        return store.post(
                        principalId,
                        notice.spaceId(),
                        notice.type(),
                        notice.title(),
                        notice.body(),
                        notice.link(),
                        notice.data())
                .map(Notification::id);
    }
}
