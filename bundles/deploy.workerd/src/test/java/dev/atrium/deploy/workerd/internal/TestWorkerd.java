package dev.atrium.deploy.workerd.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** The workerd binary the tests run: installed by {@code ./atrium test}, else installed here with npm. */
final class TestWorkerd {

    private TestWorkerd() {}

    static synchronized String binary() {
        Path prefix = Path.of(
                System.getProperty("user.home"), ".cache", "atrium", "workerd-" + WorkerdRuntime.WORKERD_VERSION);
        Path bin = prefix.resolve("node_modules/@cloudflare/workerd-linux-64/bin/workerd");
        if (!Files.isExecutable(bin)) {
            try {
                Files.createDirectories(prefix);
                Process npm = new ProcessBuilder(
                                "npm",
                                "install",
                                "--no-audit",
                                "--no-fund",
                                "--loglevel=error",
                                "--prefix",
                                prefix.toString(),
                                "workerd@" + WorkerdRuntime.WORKERD_VERSION)
                        .inheritIO()
                        .start();
                if (!npm.waitFor(300, TimeUnit.SECONDS) || npm.exitValue() != 0) {
                    throw new IllegalStateException("npm install workerd failed");
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot install workerd (npm)", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        return bin.toString();
    }
}
