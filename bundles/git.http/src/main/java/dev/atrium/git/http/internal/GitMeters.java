package dev.atrium.git.http.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.osgi.service.component.annotations.Component;

/**
 * Pack exchanges for the metrics capability: how long each upload-pack (fetch, clone) and receive-pack (push) took
 * and the bytes that went each way. Until the metrics capability binds them, nothing is recorded.
 */
@Component(service = {MeterBinder.class, GitMeters.class})
public class GitMeters implements MeterBinder {

    private record Meters(
            Timer upload, Timer receive, Counter uploadIn, Counter uploadOut, Counter receiveIn, Counter receiveOut) {}

    private volatile Meters meters;

    @Override
    public void bindTo(MeterRegistry registry) {
        meters = new Meters(
                timer(registry, "upload-pack"),
                timer(registry, "receive-pack"),
                bytes(registry, "upload-pack", "in"),
                bytes(registry, "upload-pack", "out"),
                bytes(registry, "receive-pack", "in"),
                bytes(registry, "receive-pack", "out"));
    }

    private static Timer timer(MeterRegistry registry, String service) {
        return Timer.builder("atrium.git.pack")
                .description("Git pack exchanges over smart HTTP, to the answer's end")
                .tag("service", service)
                .serviceLevelObjectives(
                        Duration.ofMillis(50),
                        Duration.ofMillis(250),
                        Duration.ofSeconds(1),
                        Duration.ofSeconds(5),
                        Duration.ofSeconds(30),
                        Duration.ofMinutes(2))
                .register(registry);
    }

    private static Counter bytes(MeterRegistry registry, String service, String direction) {
        return Counter.builder("atrium.git.pack.bytes")
                .description("Bytes of Git pack exchanges: in is the client's request, out the server's answer")
                .baseUnit("bytes")
                .tag("service", service)
                .tag("direction", direction)
                .register(registry);
    }

    /** Serves one pack exchange through {@code exchange}, counting its bytes and time. */
    void measure(boolean receive, HttpServletRequest req, HttpServletResponse resp, Exchange exchange)
            throws IOException, jakarta.servlet.ServletException {
        Meters m = meters;
        if (m == null) {
            exchange.serve(req, resp);
            return;
        }
        LongAdder in = new LongAdder();
        LongAdder out = new LongAdder();
        long start = System.nanoTime();
        try {
            exchange.serve(countingIn(req, in), countingOut(resp, out));
        } finally {
            (receive ? m.receive() : m.upload()).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            (receive ? m.receiveIn() : m.uploadIn()).increment((double) in.sum());
            (receive ? m.receiveOut() : m.uploadOut()).increment((double) out.sum());
        }
    }

    interface Exchange {
        void serve(HttpServletRequest req, HttpServletResponse resp)
                throws IOException, jakarta.servlet.ServletException;
    }

    private static HttpServletRequest countingIn(HttpServletRequest req, LongAdder count) throws IOException {
        ServletInputStream body = req.getInputStream();
        ServletInputStream counted = new ServletInputStream() {
            @Override
            public int read() throws IOException {
                int b = body.read();
                if (b >= 0) {
                    count.increment();
                }
                return b;
            }

            @Override
            public int read(byte[] buf, int off, int len) throws IOException {
                int n = body.read(buf, off, len);
                if (n > 0) {
                    count.add(n);
                }
                return n;
            }

            @Override
            public boolean isFinished() {
                return body.isFinished();
            }

            @Override
            public boolean isReady() {
                return body.isReady();
            }

            @Override
            public void setReadListener(ReadListener listener) {
                body.setReadListener(listener);
            }
        };
        return new HttpServletRequestWrapper(req) {
            @Override
            public ServletInputStream getInputStream() {
                return counted;
            }
        };
    }

    private static HttpServletResponse countingOut(HttpServletResponse resp, LongAdder count) {
        return new HttpServletResponseWrapper(resp) {
            private ServletOutputStream counted;

            @Override
            public ServletOutputStream getOutputStream() throws IOException {
                if (counted == null) {
                    ServletOutputStream body = super.getOutputStream();
                    counted = new ServletOutputStream() {
                        @Override
                        public void write(int b) throws IOException {
                            body.write(b);
                            count.increment();
                        }

                        @Override
                        public void write(byte[] buf, int off, int len) throws IOException {
                            body.write(buf, off, len);
                            count.add(len);
                        }

                        @Override
                        public void flush() throws IOException {
                            body.flush();
                        }

                        @Override
                        public void close() throws IOException {
                            body.close();
                        }

                        @Override
                        public boolean isReady() {
                            return body.isReady();
                        }

                        @Override
                        public void setWriteListener(WriteListener listener) {
                            body.setWriteListener(listener);
                        }
                    };
                }
                return counted;
            }
        };
    }
}
