package dev.atrium.reminders.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.atrium.kernel.api.ApiException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;

class RecurrenceTest {

    static final ZoneId PARIS = ZoneId.of("Europe/Paris");

    static Instant next(String rule, String start, ZoneId zone, String after) {
        return Recurrence.parse(rule, zone).nextAfter(LocalDateTime.parse(start), zone, Instant.parse(after));
    }

    @Test
    void dailyKeepsTheWallClockTimeAcrossDaylightSaving() {
        // Paris leaves summer time on 2026-10-25: 09:00 is 07:00Z before and 08:00Z after
        assertEquals(
                Instant.parse("2026-10-24T07:00:00Z"),
                next("FREQ=DAILY", "2026-10-01T09:00", PARIS, "2026-10-23T07:00:00Z"));
        assertEquals(
                Instant.parse("2026-10-26T08:00:00Z"),
                next("FREQ=DAILY", "2026-10-01T09:00", PARIS, "2026-10-25T08:00:00Z"));
    }

    @Test
    void aRuleBeforeItsStartFiresFirstAtTheStart() {
        assertEquals(
                Instant.parse("2026-12-01T08:00:00Z"),
                next("FREQ=DAILY;INTERVAL=3", "2026-12-01T09:00", PARIS, "2026-11-01T00:00:00Z"));
    }

    @Test
    void missedOccurrencesCollapseIntoTheNextOneAfterNow() {
        // started a year ago, every 2 hours: the next one is the first after now, not the first missed one
        assertEquals(
                Instant.parse("2026-11-25T12:00:00Z"),
                next("FREQ=HOURLY;INTERVAL=2", "2025-11-25T00:00", ZoneId.of("UTC"), "2026-11-25T10:30:00Z"));
        assertEquals(
                Instant.parse("2026-11-25T10:31:00Z"),
                next("FREQ=MINUTELY", "2025-11-25T00:00", ZoneId.of("UTC"), "2026-11-25T10:30:00Z"));
    }

    @Test
    void weeklyByDayTakesTheListedDaysOfEveryIntervalWeek() {
        // 2026-11-23 is a Monday; every other week on Monday and Thursday
        String rule = "FREQ=WEEKLY;INTERVAL=2;BYDAY=TH,MO";
        ZoneId utc = ZoneId.of("UTC");
        assertEquals(
                Instant.parse("2026-11-26T09:00:00Z"), next(rule, "2026-11-23T09:00", utc, "2026-11-23T09:00:00Z"));
        assertEquals(
                Instant.parse("2026-12-07T09:00:00Z"), next(rule, "2026-11-23T09:00", utc, "2026-11-26T09:00:00Z"));
        assertEquals(
                "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH",
                Recurrence.parse(rule, utc).text());
    }

    @Test
    void monthlyOnThe31stSkipsShorterMonths() {
        assertEquals(
                Instant.parse("2026-12-31T09:00:00Z"),
                next("FREQ=MONTHLY", "2026-10-31T09:00", ZoneId.of("UTC"), "2026-11-01T00:00:00Z"));
        assertEquals(
                Instant.parse("2028-02-29T09:00:00Z"),
                next("FREQ=YEARLY", "2024-02-29T09:00", ZoneId.of("UTC"), "2024-03-01T00:00:00Z"));
    }

    @Test
    void untilEndsTheRuleInclusively() {
        assertEquals(
                Instant.parse("2026-12-03T09:00:00Z"),
                next("FREQ=DAILY;UNTIL=20261203", "2026-12-01T09:00", ZoneId.of("UTC"), "2026-12-02T10:00:00Z"));
        assertNull(next(
                "FREQ=DAILY;UNTIL=20261203T000000Z", "2026-12-01T09:00", ZoneId.of("UTC"), "2026-12-02T10:00:00Z"));
    }

    @Test
    void whatTheSubsetDoesNotTakeIsABadRequestSayingSo() {
        for (String bad : new String[] {
            "",
            "FREQ=SECONDLY",
            "FREQ=DAILY;COUNT=3",
            "FREQ=DAILY;INTERVAL=0",
            "FREQ=DAILY;BYDAY=MO",
            "FREQ=WEEKLY;BYDAY=1MO",
            "INTERVAL=2",
            "FREQ=DAILY;FREQ=DAILY",
            "FREQ=DAILY;UNTIL=tomorrow",
            "FREQ"
        }) {
            ApiException e = assertThrows(ApiException.class, () -> Recurrence.parse(bad, ZoneId.of("UTC")), bad);
            assertEquals(400, e.status());
        }
    }
}
