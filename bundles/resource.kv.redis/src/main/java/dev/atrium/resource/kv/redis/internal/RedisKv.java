package dev.atrium.resource.kv.redis.internal;

import dev.atrium.resource.api.KvFacet;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.ResourceProviderType;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.Designate;
import redis.clients.jedis.Connection;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.exceptions.JedisException;

/**
 * kv resources on an operator's Redis. An entry is one Redis string whose value starts with its expiry (8 bytes,
 * epoch milliseconds, 0 for none) and which Redis itself expires; a sorted set per resource holds its keys for ordered,
 * prefix-bounded listing ({@code ZRANGEBYLEX} compares bytes, the order the SPI promises). A put or delete changes both
 * in one Lua script, so they never disagree; a listing drops keys whose entry Redis has expired from the set as it
 * meets them. Keys carry the resource id as a hash tag, so one resource's keys stay on one Redis Cluster slot.
 *
 * <p>Exists only when configured ({@code dev.atrium.resource.kv.redis}: {@code url}, or ATRIUM_KV_REDIS_URL). New kv
 * resources stay on PostgreSQL unless the request names {@code backend: "redis"} or the operator gives this provider
 * the higher {@code service.ranking}.
 */
@Component(
        service = ResourceProvider.class,
        configurationPid = "dev.atrium.resource.kv.redis",
        configurationPolicy = ConfigurationPolicy.REQUIRE)
@ResourceProviderType(type = "kv", backend = "redis")
@Designate(ocd = RedisKvConfig.class)
public class RedisKv implements ResourceProvider, KvFacet {

    private static final byte[] PUT = bytes("""
            if ARGV[2] == '0' then redis.call('SET', KEYS[1], ARGV[1]) else redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
            redis.call('ZADD', KEYS[2], 0, ARGV[3])
            return 1""");
    private static final byte[] DELETE = bytes("""
            local gone = redis.call('DEL', KEYS[1])
            redis.call('ZREM', KEYS[2], ARGV[1])
            return gone""");
    /** Removes a member from a resource's key set only if its entry is still absent (a put may have come meanwhile). */
    private static final byte[] FORGET = bytes("""
            if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('ZREM', KEYS[2], ARGV[1]) end
            return 1""");

    private static final int HEADER = Long.BYTES;
    /** Keys deleted per round trip when a resource is deprovisioned. */
    private static final int DEPROVISION_BATCH = 500;

    private final JedisPooled redis;
    private final String keyPrefix;

    @Activate
    public RedisKv(RedisKvConfig config) {
        URI uri = parse(config.url());
        GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(Math.max(1, config.poolSize()));
        pool.setMaxIdle(Math.max(1, config.poolSize()));
        pool.setJmxEnabled(false);
        this.redis = new JedisPooled(pool, uri, config.timeoutMillis());
        this.keyPrefix = config.keyPrefix();
    }

    private static URI parse(String url) {
        try {
            URI uri = new URI(url == null ? "" : url.trim());
            if ((!"redis".equals(uri.getScheme()) && !"rediss".equals(uri.getScheme())) || uri.getHost() == null) {
                throw new IllegalArgumentException(
                        "the Redis url must be redis://host:port[/database], not '" + url + "'");
            }
            return uri;
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("the Redis url is not a URI: '" + url + "'", e);
        }
    }

    @Deactivate
    void close() {
        redis.close();
    }

    @Override
    public void deprovision(ResourceContext ctx) throws ResourceException {
        byte[] index = indexKey(ctx);
        run(() -> {
            List<byte[]> members;
            do {
                members = redis.zrange(index, 0, DEPROVISION_BATCH - 1);
                if (!members.isEmpty()) {
                    byte[][] entries =
                            members.stream().map(m -> entryKey(ctx, m)).toArray(byte[][]::new);
                    redis.del(entries);
                    redis.zrem(index, members.toArray(byte[][]::new));
                }
            } while (members.size() == DEPROVISION_BATCH);
            redis.del(index);
            return null;
        });
    }

    @Override
    public Map<String, Object> connectionInfo(ResourceContext ctx) {
        return Map.of("backend", "redis", "entries", "/api/resources/" + ctx.resourceId() + "/kv/entries");
    }

    @Override
    public Health health(ResourceContext ctx) {
        try {
            redis.ping();
            return Health.ok();
        } catch (JedisException e) {
            return Health.failing("Redis does not answer");
        }
    }

    @Override
    public KvPage list(ResourceContext ctx, String prefix, String cursor, int limit) throws ResourceException {
        byte[] prefixBytes = bytes(prefix);
        byte[] after = cursor == null ? null : decodeCursor(cursor);
        // from the prefix (inclusive) or past the cursor, to just before prefix + 0xFF (no UTF-8 string holds 0xFF)
        byte[] min = after != null && Arrays.compareUnsigned(after, prefixBytes) >= 0
                ? bound('(', after)
                : bound('[', prefixBytes);
        byte[] max = prefix.isEmpty() ? new byte[] {'+'} : bound('(', concat(prefixBytes, new byte[] {(byte) 0xff}));
        byte[] index = indexKey(ctx);
        List<KvKey> keys = new ArrayList<>(Math.min(limit + 1, 1001));
        ctx.usage().record("reads", 1);
        return run(() -> {
            byte[] from = min;
            while (keys.size() <= limit) {
                int want = limit + 1 - keys.size();
                List<byte[]> members = redis.zrangeByLex(index, from, max, 0, want);
                if (members.isEmpty()) {
                    break;
                }
                List<byte[]> values =
                        redis.mget(members.stream().map(m -> entryKey(ctx, m)).toArray(byte[][]::new));
                for (int i = 0; i < members.size(); i++) {
                    byte[] value = values.get(i);
                    if (value == null) {
                        redis.eval(FORGET, List.of(entryKey(ctx, members.get(i)), index), List.of(members.get(i)));
                    } else {
                        keys.add(new KvKey(new String(members.get(i), StandardCharsets.UTF_8), expiry(value)));
                    }
                }
                if (members.size() < want) {
                    break;
                }
                from = bound('(', members.get(members.size() - 1));
            }
            if (keys.size() > limit) {
                List<KvKey> page = List.copyOf(keys.subList(0, limit));
                return new KvPage(page, encodeCursor(page.get(limit - 1).name()));
            }
            return new KvPage(List.copyOf(keys), null);
        });
    }

    @Override
    public Optional<KvEntry> get(ResourceContext ctx, String key) throws ResourceException {
        ctx.usage().record("reads", 1);
        byte[] stored = run(() -> redis.get(entryKey(ctx, bytes(key))));
        if (stored == null || stored.length < HEADER) {
            return Optional.empty();
        }
        Instant expires = expiry(stored);
        if (expires != null && !expires.isAfter(Instant.now())) {
            return Optional.empty(); // Redis expires it within a millisecond or so; the SPI says never after
        }
        return Optional.of(new KvEntry(key, Arrays.copyOfRange(stored, HEADER, stored.length), expires));
    }

    @Override
    public void put(ResourceContext ctx, String key, byte[] value, Duration ttl) throws ResourceException {
        long expiresAt = ttl == null ? 0 : System.currentTimeMillis() + ttl.toMillis();
        byte[] stored = ByteBuffer.allocate(HEADER + value.length)
                .putLong(expiresAt)
                .put(value)
                .array();
        byte[] member = bytes(key);
        run(() -> redis.eval(
                PUT,
                List.of(entryKey(ctx, member), indexKey(ctx)),
                List.of(stored, bytes(ttl == null ? "0" : Long.toString(Math.max(1, ttl.toMillis()))), member)));
        ctx.usage().record("writes", 1);
    }

    @Override
    public boolean delete(ResourceContext ctx, String key) throws ResourceException {
        byte[] member = bytes(key);
        Object gone = run(() -> redis.eval(DELETE, List.of(entryKey(ctx, member), indexKey(ctx)), List.of(member)));
        ctx.usage().record("writes", 1);
        return gone instanceof Long n && n > 0;
    }

    private byte[] entryKey(ResourceContext ctx, byte[] member) {
        return concat(bytes(keyPrefix + "{" + ctx.resourceId() + "}:e:"), member);
    }

    private byte[] indexKey(ResourceContext ctx) {
        return bytes(keyPrefix + "{" + ctx.resourceId() + "}:keys");
    }

    private static Instant expiry(byte[] stored) {
        long at = ByteBuffer.wrap(stored, 0, HEADER).getLong();
        return at == 0 ? null : Instant.ofEpochMilli(at);
    }

    private static byte[] bound(char kind, byte[] value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(value.length + 1);
        out.write(kind);
        out.writeBytes(value);
        return out.toByteArray();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String encodeCursor(String key) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes(key));
    }

    private static byte[] decodeCursor(String cursor) throws ResourceException {
        try {
            return Base64.getUrlDecoder().decode(cursor);
        } catch (IllegalArgumentException e) {
            throw ResourceException.badInput("cursor is not one this listing returned");
        }
    }

    private interface RedisCall<T> {
        T call();
    }

    private static <T> T run(RedisCall<T> call) throws ResourceException {
        try {
            return call.call();
        } catch (JedisException e) {
            throw ResourceException.unavailable("the kv store on Redis failed; try again", e);
        }
    }
}
