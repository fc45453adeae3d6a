package dev.atrium.kernel.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class PageRequestTest {

    @Test
    void defaultsAreTwentyFromTheStart() {
        assertEquals(new PageRequest(20, 0), PageRequest.of(null, null));
        assertEquals(new PageRequest(20, 0), PageRequest.of("", " "));
    }

    @Test
    void theListBodyNamesItsItemsAndEchoesThePage() {
        assertEquals(
                "{things=[a], total=7, limit=5, offset=2}",
                PageRequest.of("5", "2")
                        .body("things", java.util.List.of("a"), 7)
                        .toString());
    }

    @Test
    void limitIsOneToOneHundredAndOffsetNotNegative() {
        assertEquals(new PageRequest(100, 7), PageRequest.of("100", "7"));
        for (String[] bad : new String[][] {{"0", "0"}, {"101", "0"}, {"x", "0"}, {"5", "-1"}, {"5", "1.5"}}) {
            assertEquals(
                    400,
                    assertThrows(ApiException.class, () -> PageRequest.of(bad[0], bad[1]))
                            .status());
        }
    }
}
