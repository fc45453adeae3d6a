package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs last (junit-platform.properties orders classes by {@link Order}): whatever the suite sent to the shared
 * server by any way in (pushes, bundles, remote imports, forks, JSON commits, archives), every repository it
 * holds passes the real {@code git fsck --strict}.
 */
@Order(Integer.MAX_VALUE)
@SharedServer
class RepositoriesFsckTest {

    @TempDir
    Path tmp;

    @Test
    void everyRepositoryOfTheSharedServerPassesGitFsckStrictAfterTheWholeSuite(AtriumServer server) throws Exception {
        GitClient git = GitClient.anonymous(tmp.resolve("home"));
        List<Path> repositories = RepoSecurityTest.bareRepositories(server.data);
        List<String> failures = new ArrayList<>();
        for (Path repo : repositories) {
            GitClient.Result r = git.run(repo, "fsck", "--strict", "--no-dangling", "--no-progress");
            if (r.exit() != 0 || r.err().contains("error") || r.err().contains("warning")) {
                failures.add(repo.getFileName() + " (exit " + r.exit() + "):\n" + r.both());
            }
        }
        System.out.println(
                "git fsck --strict: " + repositories.size() + " repositories, " + failures.size() + " failing");
        assertTrue(
                failures.isEmpty(),
                failures.size() + " of " + repositories.size() + " repositories fail git fsck --strict:\n"
                        + String.join("\n", failures));
    }
}
