package com.example.atrium.fileskv;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.io.TempDir;

import dev.atrium.resource.api.KvFacetContract;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.TestResourceContext;

/** The SPI's kv contract, run on this backend: each resource a fresh directory, as the server gives it. */
class FilesKvTest extends KvFacetContract {

    private final FilesKv provider = new FilesKv();

    @TempDir
    Path data;

    @Override
    protected ResourceProvider provider() {
        return provider;
    }

    @Override
    protected TestResourceContext newResource() throws Exception {
        Map<String, Object> config = provider.configSchema().validate(Map.of());
        TestResourceContext ctx = new TestResourceContext(null, Files.createTempDirectory(data, "resource-"), config);
        provider.provision(ctx);
        return ctx;
    }
}
