package dev.atrium.database.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

class EmbeddedStartsTest {

    @Test
    void theChosenPortIsBelowTheEphemeralRangeAndFree() throws Exception {
        for (int i = 0; i < 20; i++) {
            int port = EmbeddedStarts.port();
            assertTrue(port > 0, "a free port below the ephemeral range");
            assertTrue(port < EmbeddedStarts.ephemeralLow(), port + " is not in the ephemeral range");
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            }
        }
    }
}
