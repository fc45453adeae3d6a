package dev.atrium.oauth.internal;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Limits unauthenticated dynamic client registration (RFC 7591): each registration is a stored row anyone can
 * create. Counted over a sliding hour per client address (an IPv6 client by its /64, which one host usually holds
 * whole) and for the whole server, so that neither one address nor many can fill the table. Memory stays bounded:
 * at most {@link #MAX_ADDRESSES} addresses, the least recently used dropped, each with at most its limit of times.
 */
@Component(
        service = RegistrationLimiter.class,
        configurationPid = "dev.atrium.oauth.registration",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = RegistrationLimiter.Config.class)
public class RegistrationLimiter {

    @ObjectClassDefinition(name = "Atrium OAuth dynamic registration limits")
    public @interface Config {
        @AttributeDefinition(description = "Registrations per client address (IPv6: per /64) per hour")
        int perAddressPerHour() default 20;

        @AttributeDefinition(description = "Registrations per hour for the whole server")
        int globalPerHour() default 1000;
    }

    static final int MAX_ADDRESSES = 10_000;
    static final long WINDOW_MILLIS = 3_600_000L;

    /** A refusal: which limit, and how many seconds until an attempt may succeed. */
    record Refusal(String reason, long retryAfterSeconds) {}

    private final int perAddress;
    private final int global;
    private final LongSupplier clock;
    private final ArrayDeque<Long> all = new ArrayDeque<>();
    private final Map<String, ArrayDeque<Long>> byAddress = new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, ArrayDeque<Long>> eldest) {
            return size() > MAX_ADDRESSES;
        }
    };

    @Activate
    public RegistrationLimiter(Config config) {
        this(config.perAddressPerHour(), config.globalPerHour(), System::currentTimeMillis);
    }

    RegistrationLimiter(int perAddress, int global, LongSupplier clock) {
        this.perAddress = perAddress;
        this.global = global;
        this.clock = clock;
    }

    /** Counts a registration attempt from {@code remoteAddress}; a refusal when a limit has been reached. */
    synchronized Refusal attempt(String remoteAddress) {
        long now = clock.getAsLong();
        expire(all, now);
        String key = key(remoteAddress);
        ArrayDeque<Long> mine = byAddress.computeIfAbsent(key, k -> new ArrayDeque<>());
        expire(mine, now);
        if (mine.size() >= perAddress) {
            return new Refusal("too many client registrations from this address", retryAfter(mine, now));
        }
        if (all.size() >= global) {
            return new Refusal("too many client registrations on this server", retryAfter(all, now));
        }
        mine.addLast(now);
        all.addLast(now);
        return null;
    }

    private static void expire(ArrayDeque<Long> times, long now) {
        while (!times.isEmpty() && times.peekFirst() <= now - WINDOW_MILLIS) {
            times.removeFirst();
        }
    }

    private static long retryAfter(ArrayDeque<Long> times, long now) {
        return Math.max(1, (times.peekFirst() + WINDOW_MILLIS - now + 999) / 1000);
    }

    /** The address as counted: IPv4 (an IPv4-mapped IPv6 address included) whole, IPv6 by its /64. */
    static String key(String remoteAddress) {
        if (remoteAddress == null || remoteAddress.isEmpty()) {
            return "?";
        }
        if (remoteAddress.indexOf(':') < 0) {
            return remoteAddress;
        }
        try {
            String literal = remoteAddress.startsWith("[")
                    ? remoteAddress.substring(1, remoteAddress.length() - 1)
                    : remoteAddress;
            int zone = literal.indexOf('%');
            byte[] b = InetAddress.getByName(zone < 0 ? literal : literal.substring(0, zone))
                    .getAddress();
            if (b.length == 4) {
                return InetAddress.getByAddress(b).getHostAddress();
            }
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 8; i += 2) {
                sb.append(Integer.toHexString((b[i] & 0xff) << 8 | (b[i + 1] & 0xff)))
                        .append(':');
            }
            return sb.append(":/64").toString();
        } catch (UnknownHostException e) {
            return remoteAddress;
        }
    }
}
