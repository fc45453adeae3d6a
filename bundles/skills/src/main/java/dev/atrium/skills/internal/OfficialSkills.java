package dev.atrium.skills.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Enumeration;
import java.util.Optional;
import java.util.TreeMap;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;

/** The official catalog: every {@code skills/*.md} of this bundle, read once at activation, by name. */
@Component(service = OfficialSkills.class)
public class OfficialSkills {

    private final TreeMap<String, SkillDocument> skills = new TreeMap<>();

    @Activate
    public OfficialSkills(BundleContext context) throws IOException {
        Enumeration<URL> entries = context.getBundle().findEntries("skills", "*.md", false);
        while (entries != null && entries.hasMoreElements()) {
            URL url = entries.nextElement();
            try (InputStream in = url.openStream()) {
                SkillDocument skill = SkillDocument.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
                if (skills.put(skill.name(), skill) != null) {
                    throw new IllegalStateException("two official skills are named " + skill.name());
                }
            }
        }
    }

    Collection<SkillDocument> all() {
        return skills.values();
    }

    Optional<SkillDocument> get(String id) {
        return Optional.ofNullable(id == null ? null : skills.get(id));
    }
}
