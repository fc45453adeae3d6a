package dev.atrium.reminders.internal;

import dev.atrium.kernel.api.ApiException;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.time.temporal.TemporalAdjusters;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The RFC 5545 RRULE subset reminders take: {@code FREQ} (MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY, YEARLY),
 * {@code INTERVAL} (1-1000), {@code BYDAY} (plain weekdays, WEEKLY only) and {@code UNTIL} (a UTC date-time, a local
 * date-time or a date, inclusive). Occurrences start at DTSTART (the reminder's {@code starts_at}, a wall-clock time
 * in its time zone): MINUTELY and HOURLY step in absolute time, the others keep the wall-clock time across DST (a
 * time a DST gap skips moves forward by the gap; a day a month lacks, such as the 31st, is skipped, as RFC 5545
 * says).
 */
record Recurrence(Freq freq, int interval, Set<DayOfWeek> byDay, Instant until, String text) {

    enum Freq {
        MINUTELY,
        HOURLY,
        DAILY,
        WEEKLY,
        MONTHLY,
        YEARLY
    }

    static final int MAX_LENGTH = 200;
    private static final Map<String, DayOfWeek> DAYS = Map.of(
            "MO",
            DayOfWeek.MONDAY,
            "TU",
            DayOfWeek.TUESDAY,
            "WE",
            DayOfWeek.WEDNESDAY,
            "TH",
            DayOfWeek.THURSDAY,
            "FR",
            DayOfWeek.FRIDAY,
            "SA",
            DayOfWeek.SATURDAY,
            "SU",
            DayOfWeek.SUNDAY);
    private static final DateTimeFormatter BASIC_DATE_TIME = DateTimeFormatter.ofPattern("uuuuMMdd'T'HHmmss");
    private static final DateTimeFormatter BASIC_DATE = DateTimeFormatter.ofPattern("uuuuMMdd");
    /** A guard for a rule no occurrence ever matches (it cannot happen with this subset, but a loop must end). */
    private static final int MAX_STEPS = 10_000;

    /** Parses {@code text} (with or without a leading {@code RRULE:}); 400 saying what is wrong. */
    static Recurrence parse(String text, ZoneId zone) {
        if (text == null || text.isBlank()) {
            throw ApiException.badRequest("rrule must not be empty");
        }
        String rule = text.trim();
        if (rule.length() > MAX_LENGTH) {
            throw ApiException.badRequest("rrule must be at most " + MAX_LENGTH + " characters");
        }
        if (rule.regionMatches(true, 0, "RRULE:", 0, 6)) {
            rule = rule.substring(6);
        }
        Map<String, String> parts = new LinkedHashMap<>();
        for (String part : rule.split(";", -1)) {
            int eq = part.indexOf('=');
            if (eq <= 0 || eq == part.length() - 1) {
                throw ApiException.badRequest(
                        "rrule must be NAME=VALUE parts separated by ';' (e.g. FREQ=DAILY;INTERVAL=2)");
            }
            String name = part.substring(0, eq).trim().toUpperCase(Locale.ROOT);
            if (parts.put(name, part.substring(eq + 1).trim().toUpperCase(Locale.ROOT)) != null) {
                throw ApiException.badRequest("rrule names " + name + " twice");
            }
        }
        for (String name : parts.keySet()) {
            if (!Set.of("FREQ", "INTERVAL", "BYDAY", "UNTIL").contains(name)) {
                throw ApiException.badRequest(
                        "rrule part " + name + " is not supported (supported: FREQ, INTERVAL, BYDAY, UNTIL)");
            }
        }
        String f = parts.get("FREQ");
        if (f == null) {
            throw ApiException.badRequest("rrule needs FREQ");
        }
        Freq freq;
        try {
            freq = Freq.valueOf(f);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("rrule FREQ must be one of MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY, YEARLY");
        }
        int interval = 1;
        if (parts.containsKey("INTERVAL")) {
            try {
                interval = Integer.parseInt(parts.get("INTERVAL"));
            } catch (NumberFormatException e) {
                interval = 0;
            }
            if (interval < 1 || interval > 1000) {
                throw ApiException.badRequest("rrule INTERVAL must be a whole number from 1 to 1000");
            }
        }
        Set<DayOfWeek> byDay = EnumSet.noneOf(DayOfWeek.class);
        if (parts.containsKey("BYDAY")) {
            if (freq != Freq.WEEKLY) {
                throw ApiException.badRequest("rrule BYDAY is supported with FREQ=WEEKLY only");
            }
            for (String d : parts.get("BYDAY").split(",", -1)) {
                DayOfWeek day = DAYS.get(d.trim());
                if (day == null) {
                    throw ApiException.badRequest(
                            "rrule BYDAY takes weekdays MO, TU, WE, TH, FR, SA, SU separated by ','");
                }
                byDay.add(day);
            }
        }
        Instant until = parts.containsKey("UNTIL") ? until(parts.get("UNTIL"), zone) : null;
        StringBuilder canonical = new StringBuilder("FREQ=").append(freq);
        if (interval != 1) {
            canonical.append(";INTERVAL=").append(interval);
        }
        if (!byDay.isEmpty()) {
            List<String> names = new ArrayList<>();
            for (DayOfWeek d : byDay) {
                names.add(d.name().substring(0, 2));
            }
            canonical.append(";BYDAY=").append(String.join(",", names));
        }
        if (parts.containsKey("UNTIL")) {
            canonical.append(";UNTIL=").append(parts.get("UNTIL"));
        }
        return new Recurrence(freq, interval, Set.copyOf(byDay), until, canonical.toString());
    }

    private static Instant until(String value, ZoneId zone) {
        try {
            if (value.endsWith("Z")) {
                return LocalDateTime.parse(value.substring(0, value.length() - 1), BASIC_DATE_TIME)
                        .toInstant(ZoneOffset.UTC);
            }
            if (value.contains("T")) {
                return LocalDateTime.parse(value, BASIC_DATE_TIME).atZone(zone).toInstant();
            }
            // a date: the whole day counts
            return LocalDate.parse(value, BASIC_DATE)
                    .plusDays(1)
                    .atStartOfDay(zone)
                    .toInstant()
                    .minusNanos(1);
        } catch (DateTimeParseException e) {
            throw ApiException.badRequest("rrule UNTIL must be YYYYMMDD, YYYYMMDDTHHMMSS or YYYYMMDDTHHMMSSZ");
        }
    }

    /** The first occurrence strictly after {@code after}, or null when UNTIL has passed. */
    Instant nextAfter(LocalDateTime start, ZoneId zone, Instant after) {
        Instant next = switch (freq) {
            case MINUTELY, HOURLY -> stepped(start.atZone(zone).toInstant(), after);
            case DAILY -> daily(start, zone, after);
            case WEEKLY -> weekly(start, zone, after);
            case MONTHLY -> monthly(start, zone, after, interval);
            case YEARLY -> monthly(start, zone, after, 12 * interval);
        };
        return next == null || (until != null && next.isAfter(until)) ? null : next;
    }

    private Instant stepped(Instant first, Instant after) {
        if (first.isAfter(after)) {
            return first;
        }
        long step = (freq == Freq.MINUTELY ? 60L : 3600L) * interval;
        long k = Duration.between(first, after).toSeconds() / step + 1;
        Instant next = first.plusSeconds(k * step);
        return next.isAfter(after) ? next : next.plusSeconds(step);
    }

    private Instant daily(LocalDateTime start, ZoneId zone, Instant after) {
        LocalDate d0 = start.toLocalDate();
        LocalTime time = start.toLocalTime();
        long days = ChronoUnit.DAYS.between(d0, LocalDate.ofInstant(after, zone));
        long k = Math.max(0, days / interval - 1);
        for (int i = 0; i < MAX_STEPS; i++, k++) {
            Instant candidate =
                    ZonedDateTime.of(d0.plusDays(k * interval), time, zone).toInstant();
            if (candidate.isAfter(after)) {
                return candidate;
            }
        }
        return null;
    }

    private Instant weekly(LocalDateTime start, ZoneId zone, Instant after) {
        LocalDate d0 = start.toLocalDate();
        LocalTime time = start.toLocalTime();
        TreeSet<DayOfWeek> days = new TreeSet<>(byDay.isEmpty() ? Set.of(d0.getDayOfWeek()) : byDay);
        LocalDate week0 = d0.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
        long weeks = ChronoUnit.WEEKS.between(week0, LocalDate.ofInstant(after, zone));
        long k = Math.max(0, weeks / interval - 1);
        for (int i = 0; i < MAX_STEPS; i++, k++) {
            LocalDate week = week0.plusWeeks(k * interval);
            for (DayOfWeek day : days) {
                LocalDate date = week.plusDays(day.getValue() - 1L);
                if (date.isBefore(d0)) {
                    continue;
                }
                Instant candidate = ZonedDateTime.of(date, time, zone).toInstant();
                if (candidate.isAfter(after)) {
                    return candidate;
                }
            }
        }
        return null;
    }

    private static Instant monthly(LocalDateTime start, ZoneId zone, Instant after, int months) {
        LocalDate d0 = start.toLocalDate();
        LocalTime time = start.toLocalTime();
        YearMonth m0 = YearMonth.from(d0);
        long elapsed = ChronoUnit.MONTHS.between(m0, YearMonth.from(LocalDate.ofInstant(after, zone)));
        long k = Math.max(0, elapsed / months - 1);
        for (int i = 0; i < MAX_STEPS; i++, k++) {
            YearMonth month = m0.plusMonths(k * months);
            if (!month.isValidDay(d0.getDayOfMonth())) {
                continue;
            }
            Instant candidate = ZonedDateTime.of(month.atDay(d0.getDayOfMonth()), time, zone)
                    .toInstant();
            if (candidate.isAfter(after)) {
                return candidate;
            }
        }
        return null;
    }
}
