package dev.atrium.operations.internal;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;

/**
 * The server's last log lines, in memory, for the console's live tail. The runtime logs through SLF4J's simple
 * provider, which prints each line to {@code System.err} as it is then (it does not keep the stream): this component
 * puts a stream in front of it that passes every byte on and keeps a copy of each line, and puts the old one back when
 * it stops. The ring holds at most {@value #MAX_LINES} lines and {@value #MAX_CHARS} characters; the oldest go first.
 */
@Component(service = LogRing.class, immediate = true)
public class LogRing {

    static final int MAX_LINES = 10_000;
    static final int MAX_CHARS = 4 * 1024 * 1024;
    /** Longer lines (a huge message) are cut here, so one line cannot empty the ring. */
    static final int MAX_LINE_CHARS = 8 * 1024;

    static final List<String> LEVELS = List.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR");

    /**
     * One line: {@code seq} counts every line since the start; a stack trace's lines and other continuations carry the
     * level and logger of the line they continue; output that is not SLF4J's (the framework's own) is logger
     * {@code stderr}.
     */
    record Line(long seq, String time, String level, String logger, String thread, String message, String text) {}

    /** SLF4J simple's format as the launcher configures it: date and time, [thread], level, logger, " - ", message. */
    private static final Pattern FORMAT = Pattern.compile(
            "(\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3}) \\[(.*?)] (TRACE|DEBUG|INFO|WARN|ERROR) (\\S+) - (.*)",
            Pattern.DOTALL);

    private static final Pattern CONTINUATION = Pattern.compile(
            "(\\s.*|Caused by: .*|Suppressed: .*|[A-Za-z_$][\\w.$]*(Exception|Error|Throwable)(: .*)?)",
            Pattern.DOTALL);

    private final Deque<Line> lines = new ArrayDeque<>();
    private long chars;
    private long nextSeq = 1;
    private Line previousLine;

    private final PrintStream previous;
    private final PrintStream tee;

    @Activate
    public LogRing() {
        this(true);
    }

    LogRing(boolean capture) {
        if (capture) {
            previous = System.err;
            tee = new PrintStream(new Tee(previous), true, StandardCharsets.UTF_8);
            System.setErr(tee);
        } else {
            previous = null;
            tee = null;
        }
    }

    @Deactivate
    void stop() {
        // only if nobody put a stream of their own in front of ours meanwhile
        if (tee != null && System.err == tee) {
            System.setErr(previous);
        }
    }

    /** Passes every byte on and hands each complete line to the ring. */
    private final class Tee extends OutputStream {
        private final PrintStream out;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();

        Tee(PrintStream out) {
            this.out = out;
        }

        @Override
        public synchronized void write(int b) {
            out.write(b);
            take(b);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            out.write(b, off, len);
            for (int i = off; i < off + len; i++) {
                take(b[i]);
            }
        }

        @Override
        public void flush() {
            out.flush();
        }

        private void take(int b) {
            if (b == '\n') {
                String text = line.toString(StandardCharsets.UTF_8);
                line.reset();
                add(text.endsWith("\r") ? text.substring(0, text.length() - 1) : text);
            } else if (line.size() < MAX_LINE_CHARS * 4) {
                line.write(b);
            }
        }
    }

    /** Adds a line as SLF4J simple printed it. */
    synchronized void add(String text) {
        if (text.length() > MAX_LINE_CHARS) {
            text = text.substring(0, MAX_LINE_CHARS) + " …";
        }
        Matcher m = FORMAT.matcher(text);
        Line line;
        if (m.matches()) {
            line = new Line(nextSeq, m.group(1), m.group(3), m.group(4), m.group(2), m.group(5), text);
        } else if (previousLine != null && CONTINUATION.matcher(text).matches()) {
            line = new Line(
                    nextSeq,
                    previousLine.time(),
                    previousLine.level(),
                    previousLine.logger(),
                    previousLine.thread(),
                    text,
                    text);
        } else {
            String level = text.startsWith("ERROR") ? "ERROR" : text.startsWith("WARN") ? "WARN" : "INFO";
            line = new Line(nextSeq, null, level, "stderr", null, text, text);
        }
        nextSeq++;
        previousLine = line;
        lines.addLast(line);
        chars += text.length();
        while (lines.size() > MAX_LINES || chars > MAX_CHARS) {
            chars -= lines.removeFirst().text().length();
        }
    }

    /**
     * The lines after {@code after} (a {@code seq}) at {@code minLevel} or above whose logger contains {@code logger}
     * (either may be null for any), the newest {@code limit} of them, oldest first.
     */
    synchronized List<Line> lines(long after, String minLevel, String logger, int limit) {
        int floor = minLevel == null ? 0 : LEVELS.indexOf(minLevel);
        String part = logger == null ? null : logger.toLowerCase(Locale.ROOT);
        List<Line> out = new ArrayList<>();
        var it = lines.descendingIterator();
        while (it.hasNext() && out.size() < limit) {
            Line l = it.next();
            if (l.seq() <= after) {
                break;
            }
            if (LEVELS.indexOf(l.level()) >= floor
                    && (part == null || l.logger().toLowerCase(Locale.ROOT).contains(part))) {
                out.add(l);
            }
        }
        Collections.reverse(out);
        return out;
    }

    /** Lines as {@link #lines} finds them, and the {@code seq} of the newest line of the ring then (0 for none). */
    record Tail(List<Line> lines, long last) {}

    synchronized Tail tail(long after, String minLevel, String logger, int limit) {
        return new Tail(lines(after, minLevel, logger, limit), nextSeq - 1);
    }
}
