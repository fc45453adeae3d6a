package dev.atrium.billing.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.billing.api.BillingProvider;
import java.io.ByteArrayInputStream;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BillingSettingsTest {

    @Test
    void plansAreReadWithTheirLimitsAndAtMostOneIsWithoutAPrice() {
        List<BillingSettings.Plan> plans =
                BillingSettings.parsePlans("[{\"id\":\"free\",\"name\":\"Free\",\"limits\":{\"vector_queries\":100}},"
                        + "{\"id\":\"pro\",\"name\":\"Pro\",\"price\":\"price_1\"}]");
        assertEquals(2, plans.size());
        assertEquals(Map.of("vector_queries", 100L), plans.get(0).limits());
        assertEquals("", plans.get(0).price());
        assertEquals("price_1", plans.get(1).price());
        assertTrue(BillingSettings.parsePlans(" ").isEmpty());
    }

    @Test
    void aMalformedPlanSaysWhatIsWrong() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> BillingSettings.parsePlans("{"))
                .getMessage()
                .contains("not JSON"));
        assertTrue(assertThrows(
                        IllegalArgumentException.class,
                        () -> BillingSettings.parsePlans("[{\"id\":\"a\",\"limits\":{\"bogus\":1}}]"))
                .getMessage()
                .contains("unknown meter bogus"));
        assertTrue(assertThrows(
                        IllegalArgumentException.class,
                        () -> BillingSettings.parsePlans("[{\"id\":\"a\"},{\"id\":\"b\"}]"))
                .getMessage()
                .contains("at most one"));
        assertThrows(
                IllegalArgumentException.class,
                () -> BillingSettings.parsePlans("[{\"id\":\"a\",\"limits\":{\"vector_queries\":-1}}]"));
        assertThrows(IllegalArgumentException.class, () -> BillingSettings.parsePlans("[{\"id\":\"Bad Id\"}]"));
    }

    @Test
    void anInvoiceWithoutAProviderPdfIsRenderedAsAPdf() throws Exception {
        byte[] pdf = InvoiceDocuments.render(new BillingProvider.Invoice(
                "in_1", "ATR-1", "open", "eur", 1234, 0, Instant.parse("2026-12-01T00:00:00Z"), "", "", ""));
        assertTrue(new String(pdf, 0, 5, java.nio.charset.StandardCharsets.US_ASCII).equals("%PDF-"));
        try (var doc = org.apache.pdfbox.pdmodel.PDDocument.load(new ByteArrayInputStream(pdf))) {
            String text = new org.apache.pdfbox.text.PDFTextStripper().getText(doc);
            assertTrue(text.contains("Invoice ATR-1") && text.contains("12.34 EUR"), text);
        }
    }
}
