package dev.atrium.kernel.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ByteRangeTest {

    @Test
    void rangesResolveAgainstTheSize() throws Exception {
        assertNull(ByteRange.parse(null, 10));
        assertEquals(new ByteRange(2, 5), ByteRange.parse("bytes=2-5", 10));
        assertEquals(new ByteRange(2, 9), ByteRange.parse("bytes=2-", 10));
        assertEquals(new ByteRange(2, 9), ByteRange.parse("bytes=2-100", 10));
        assertEquals(new ByteRange(7, 9), ByteRange.parse("bytes=-3", 10));
        assertEquals(new ByteRange(0, 9), ByteRange.parse("bytes=-30", 10));
        assertEquals("bytes 2-5/10", new ByteRange(2, 5).contentRange(10));
    }

    @Test
    void malformedSeveralAndOutsideRangesAreUnsatisfiable() {
        for (String bad : new String[] {
            "bytes=10-",
            "bytes=20-30",
            "bytes=5-2",
            "bytes=abc",
            "items=0-1",
            "bytes=0-1,3-4",
            "bytes=-0",
            "bytes=-",
            "bytes=1-2-3",
            "bytes=99999999999999999999-"
        }) {
            assertThrows(ByteRange.Unsatisfiable.class, () -> ByteRange.parse(bad, 10), bad);
        }
        assertThrows(ByteRange.Unsatisfiable.class, () -> ByteRange.parse("bytes=0-", 0));
    }

    @Test
    void ifNoneMatchHitsTheTagAmongOthersWeakOrStar() {
        assertTrue(ByteRange.noneMatchHits("\"a\"", "\"a\""));
        assertTrue(ByteRange.noneMatchHits("\"x\", W/\"a\"", "\"a\""));
        assertTrue(ByteRange.noneMatchHits(" * ", "\"a\""));
        assertFalse(ByteRange.noneMatchHits("\"b\"", "\"a\""));
        assertFalse(ByteRange.noneMatchHits(null, "\"a\""));
    }
}
