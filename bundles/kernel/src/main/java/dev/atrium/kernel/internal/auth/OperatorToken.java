package dev.atrium.kernel.internal.auth;

import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Ids;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The operator's credential for {@code /admin}: made at first start, written to {@code <data>/operator.token}
 * with mode 0600, and read from there on every later start.
 */
@Component(
        service = OperatorToken.class,
        configurationPid = "dev.atrium.kernel.operator",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = OperatorToken.Config.class)
public class OperatorToken {

    @ObjectClassDefinition(name = "Atrium operator token")
    public @interface Config {
        @AttributeDefinition(description = "The data directory (--data, ATRIUM_DATA) that holds operator.token")
        String dataDirectory() default "data";
    }

    private final byte[] hash;

    @Activate
    public OperatorToken(Config config) throws IOException {
        Path file = Path.of(config.dataDirectory()).toAbsolutePath().resolve("operator.token");
        Files.createDirectories(file.getParent());
        String token;
        try {
            token = Ids.random("atop_", 43);
            Files.writeString(
                    Files.createFile(
                            file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))),
                    token + "\n",
                    StandardCharsets.UTF_8);
        } catch (FileAlreadyExistsException e) {
            token = Files.readString(file, StandardCharsets.UTF_8).trim();
        }
        this.hash = Digests.sha256(token);
    }

    public boolean matches(String presented) {
        return presented != null && Digests.constantTimeEquals(hash, Digests.sha256(presented));
    }
}
