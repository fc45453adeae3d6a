/*
 * bench/sse-subscribers.c: the subscriber side of bench/sse-latency.sh, in C so that a thousand subscribers cost
 * the machine (which the server shares) one epoll wait and one read per delivery, not a client library's overhead.
 *
 * Opens SUBSCRIBERS connections to GET /api/runs/RUN/sse of a run whose model (bench/fake-model.py) is holding its
 * answer, waits until every one has its response headers, tells the model to go (GET /go on MODEL_PORT), and
 * measures, for every measured `message.delta` event (text "m<i> ", after the model's warm-up deltas "w<i> ") and
 * every subscriber, arrival time minus the event's created_at (PostgreSQL's clock, the same machine's). Prints
 * median, p90, p99 and max, deliveries lost, and CPU time per event of itself and of the server.
 *
 *   sse-subscribers HOST PORT TOKEN RUN_ID SUBSCRIBERS WARMUP EVENTS MODEL_PORT [SERVER_PID]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TAIL_MAX 65536

struct conn {
    int fd;
    int headers_done;
    size_t tail_len;
    char tail[TAIL_MAX];
};

static long long *latencies;
static int measured_events;
static atomic_long received;
static long capacity;
static int connected;

static long long now_micros(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* "2026-11-22T05:21:26.122749Z" (fraction optional, 0-9 digits) -> microseconds since the epoch */
static long long parse_stamp(const char *s, size_t n) {
    static __thread char last[64];
    static __thread long long last_micros;
    if (n < 20 || n >= sizeof last) {
        return -1;
    }
    if (memcmp(last, s, n) == 0 && last[n] == 0) {
        return last_micros;
    }
    struct tm tm = {0};
    tm.tm_year = atoi(s) - 1900;
    tm.tm_mon = atoi(s + 5) - 1;
    tm.tm_mday = atoi(s + 8);
    tm.tm_hour = atoi(s + 11);
    tm.tm_min = atoi(s + 14);
    tm.tm_sec = atoi(s + 17);
    long long micros = (long long)timegm(&tm) * 1000000LL;
    if (n > 20 && s[19] == '.') {
        long frac = 0;
        int digits = 0;
        for (size_t i = 20; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            if (digits < 6) {
                frac = frac * 10 + (s[i] - '0');
                digits++;
            }
        }
        while (digits++ < 6) {
            frac *= 10;
        }
        micros += frac;
    }
    memcpy(last, s, n);
    last[n] = 0;
    last_micros = micros;
    return micros;
}

/* what a measured frame holds; bench/notifications.sh sets SSE_MARK and SSE_MEASURED (and SSE_PATH) for its stream */
static const char *MARK = "\"type\":\"message.delta\"";
static const char CREATED[] = "\"created_at\":\"";
static const char *MEASURED = "\"text\":\"m"; /* warm-up deltas are w<i>, measured ones m<i> */

/* One reader thread: its own epoll set of connections, and per measured event its earliest and latest latency. */
struct reader_args {
    int epfd;
    long long *event_first, *event_last;
};

/* Scans complete SSE frames ("\n\n"-terminated) in buf; returns the number of bytes consumed. */
static size_t scan(struct reader_args *ra, char *buf, size_t len, long long arrived) {
    long long *event_first = ra->event_first, *event_last = ra->event_last;
    size_t from = 0;
    for (;;) {
        char *end = memmem(buf + from, len - from, "\n\n", 2);
        if (end == NULL) {
            return from;
        }
        size_t frame_len = (size_t)(end - (buf + from));
        char *mark = memmem(buf + from, frame_len, MARK, strlen(MARK));
        if (mark != NULL && memmem(buf + from, frame_len, MEASURED, strlen(MEASURED)) != NULL) {
            char *c = memmem(buf + from, frame_len, CREATED, sizeof CREATED - 1);
            if (c != NULL) {
                char *start = c + sizeof CREATED - 1;
                char *stop = memchr(start, '"', (size_t)(end - start));
                if (stop != NULL) {
                    long long created = parse_stamp(start, (size_t)(stop - start));
                    long i = atomic_fetch_add(&received, 1);
                    if (i < capacity && created > 0) {
                        latencies[i] = arrived - created;
                        char *num = memmem(buf + from, frame_len, MEASURED, strlen(MEASURED));
                        int e = num ? atoi(num + strlen(MEASURED)) : -1;
                        if (e >= 0 && e < measured_events) {
                            long long l = arrived - created;
                            if (event_first[e] == 0 || l < event_first[e]) event_first[e] = l;
                            if (l > event_last[e]) event_last[e] = l;
                        }
                    }
                }
            }
        }
        from = (size_t)(end - buf) + 2;
    }
}

static int dial(const char *host, int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, host, &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("connect");
        exit(1);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void write_all(int fd, const char *s, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            perror("write");
            exit(1);
        }
        s += w;
        n -= (size_t)w;
    }
}

/* One request on a keep-alive connection; reads the answer (Content-Length body) and returns its status. */
/* utime + stime of a process in milliseconds (from /proc), or -1 */
static double process_cpu_ms(int pid) {
    char path[64], stat[4096];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = 0;
    char *p = strrchr(stat, ')');
    if (p == NULL) {
        return -1;
    }
    unsigned long ut = 0, st = 0;
    /* after ") ": state is field 3; utime and stime are fields 14 and 15 */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) {
        return -1;
    }
    return (ut + st) * 1000.0 / sysconf(_SC_CLK_TCK);
}

/* the machine's CPU time so far, in clock ticks: all of it, and what the hypervisor stole (another guest ran) */
static void machine_ticks(unsigned long long *total, unsigned long long *steal) {
    unsigned long long v[8] = {0};
    *total = *steal = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (f == NULL) {
        return;
    }
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
        for (int i = 0; i < 8; i++) {
            *total += v[i];
        }
        *steal = v[7];
    }
    fclose(f);
}

static int cmp(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static double cpu_ms(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec * 1e3 + u.ru_utime.tv_usec / 1e3 + u.ru_stime.tv_sec * 1e3 + u.ru_stime.tv_usec / 1e3;
}

static void *reader(void *p) {
    struct reader_args *ra = p;
    struct epoll_event events[1024];
    char *buf = malloc(TAIL_MAX + 262144);
    const size_t buf_size = TAIL_MAX + 262144;
    for (;;) {
        int n = epoll_wait(ra->epfd, events, 1024, -1);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            perror("epoll_wait");
            exit(1);
        }
        for (int i = 0; i < n; i++) {
            struct conn *c = events[i].data.ptr;
            memcpy(buf, c->tail, c->tail_len);
            ssize_t r = read(c->fd, buf + c->tail_len, buf_size - c->tail_len);
            if (r <= 0) {
                if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
                    continue;
                }
                epoll_ctl(ra->epfd, EPOLL_CTL_DEL, c->fd, NULL);
                close(c->fd);
                continue;
            }
            long long arrived = now_micros();
            size_t len = c->tail_len + (size_t)r;
            size_t from = 0;
            if (!c->headers_done) {
                char *h = memmem(buf, len, "\r\n\r\n", 4);
                if (h == NULL) {
                    c->tail_len = len < TAIL_MAX ? len : 0;
                    if (c->tail_len) {
                        memcpy(c->tail, buf, len);
                    }
                    continue;
                }
                if (strncmp(buf, "HTTP/1.1 200", 12) != 0) {
                    fprintf(stderr, "a subscriber got: %.*s\n", (int)(len < 200 ? len : 200), buf);
                    exit(1);
                }
                c->headers_done = 1;
                __atomic_add_fetch(&connected, 1, __ATOMIC_SEQ_CST);
                from = (size_t)(h - buf) + 4;
            }
            size_t used = from + scan(ra, buf + from, len - from, arrived);
            size_t rest = len - used;
            c->tail_len = rest < TAIL_MAX ? rest : 0;
            if (c->tail_len) {
                memmove(c->tail, buf + used, rest);
            }
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 9) {
        fprintf(stderr, "usage: %s HOST PORT TOKEN RUN_ID SUBSCRIBERS WARMUP EVENTS MODEL_PORT [SERVER_PID]\n", argv[0]);
        return 2;
    }
    const char *host = argv[1];
    int port = atoi(argv[2]);
    const char *token = argv[3];
    const char *run = argv[4];
    int subscribers = atoi(argv[5]);
    int warmup = atoi(argv[6]);
    int events = atoi(argv[7]);
    int model_port = atoi(argv[8]);
    int server_pid = argc > 9 ? atoi(argv[9]) : -1;
    capacity = (long)subscribers * events;
    latencies = calloc((size_t)capacity, sizeof *latencies);
    measured_events = events;
    /* reader threads (SSE_READERS, default 1), each with its share of the connections: with the server on the same
       two cores, a second reader cost more CPU per event than it saved in waiting; on a machine of its own, the
       subscribers can use every core */
    int readers = 1;
    const char *readers_env = getenv("SSE_READERS");
    if (readers_env != NULL && atoi(readers_env) > 0) {
        readers = atoi(readers_env);
    }
    struct reader_args *ra = calloc((size_t)readers, sizeof *ra);
    for (int r = 0; r < readers; r++) {
        ra[r].epfd = epoll_create1(0);
        ra[r].event_first = calloc((size_t)events, sizeof(long long));
        ra[r].event_last = calloc((size_t)events, sizeof(long long));
    }

    if (getenv("SSE_MARK") != NULL) {
        MARK = getenv("SSE_MARK");
    }
    if (getenv("SSE_MEASURED") != NULL) {
        MEASURED = getenv("SSE_MEASURED");
    }
    char path[1024];
    if (getenv("SSE_PATH") != NULL) {
        snprintf(path, sizeof path, "%s", getenv("SSE_PATH"));
    } else {
        snprintf(path, sizeof path, "/api/runs/%s/sse", run);
    }
    char request[4096];
    int n = snprintf(request, sizeof request,
                     "GET %s HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n",
                     path, host, port, token);
    long long t0 = now_micros();
    for (int i = 0; i < subscribers; i++) {
        struct conn *c = calloc(1, sizeof *c);
        c->fd = dial(host, port);
        write_all(c->fd, request, (size_t)n);
        fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(ra[i % readers].epfd, EPOLL_CTL_ADD, c->fd, &ev);
    }
    for (int r = 0; r < readers; r++) {
        pthread_t t;
        pthread_create(&t, NULL, reader, &ra[r]);
    }
    for (int i = 0; i < 12000 && __atomic_load_n(&connected, __ATOMIC_SEQ_CST) < subscribers; i++) {
        usleep(10000);
    }
    printf("%d of %d subscribers connected in %lld ms\n", __atomic_load_n(&connected, __ATOMIC_SEQ_CST), subscribers,
           (now_micros() - t0) / 1000);
    fflush(stdout);
    usleep(2000000); /* every subscription registered and its backlog read */

    double cpu0 = cpu_ms();
    double server0 = server_pid > 0 ? process_cpu_ms(server_pid) : -1;
    long long wall0 = now_micros();
    unsigned long long ticks0, steal0;
    machine_ticks(&ticks0, &steal0);
    int model = dial(host, model_port);
    const char go[] = "GET /go HTTP/1.0\r\n\r\n";
    write_all(model, go, sizeof go - 1);
    close(model);
    /* the warm-up deltas come first (the server's JIT compiles the fan-out path meanwhile), then the measured ones */
    for (int i = 0; i < 6000 && atomic_load(&received) < capacity; i++) {
        usleep(10000);
    }
    for (int i = 0; i < 300 && atomic_load(&received) < capacity; i++) {
        usleep(100000);
    }
    double cpu = cpu_ms() - cpu0;
    unsigned long long ticks1, steal1;
    machine_ticks(&ticks1, &steal1);
    double server = server0 >= 0 ? process_cpu_ms(server_pid) - server0 : -1;
    long got = atomic_load(&received);
    if (got > capacity) {
        got = capacity;
    }
    printf("CPU per event (warm-up included) over %.1f s: this client %.2f ms", (now_micros() - wall0) / 1e6, cpu / (warmup + events));
    if (server >= 0) {
        printf(", server %.2f ms", server / (warmup + events));
    }
    printf("\n");
    if (ticks1 > ticks0) {
        /* a virtual machine's CPUs can stop while the host runs other guests: everything late during such a pause */
        printf("CPU time stolen by the hypervisor meanwhile: %.1f%% of the machine's\n", 100.0 * (double)(steal1 - steal0) / (double)(ticks1 - ticks0));
    }
    printf("measured events: %d, subscribers: %d (%d reader threads), deliveries: %ld of %ld (lost %ld)\n", events, subscribers, readers, got,
           capacity, capacity - got);
    if (got > 0) {
        qsort(latencies, (size_t)got, sizeof *latencies, cmp);
        long p99 = (long)(got * 0.99);
        printf("append -> SSE client latency: median %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms (target p99 <= 20 ms)\n",
               latencies[got / 2] / 1000.0, latencies[(long)(got * 0.90)] / 1000.0, latencies[p99 < got ? p99 : got - 1] / 1000.0,
               latencies[got - 1] / 1000.0);
    }
    long long *event_first = calloc((size_t)events, sizeof(long long)), *event_last = calloc((size_t)events, sizeof(long long));
    for (int r = 0; r < readers; r++) {
        for (int e = 0; e < events; e++) {
            long long f = ra[r].event_first[e], l = ra[r].event_last[e];
            if (f != 0 && (event_first[e] == 0 || f < event_first[e])) event_first[e] = f;
            if (l > event_last[e]) event_last[e] = l;
        }
    }
    /* whether the slow deliveries are whole events that came late to everyone, or the tail of a fan-out */
    int worst[5] = {-1, -1, -1, -1, -1};
    for (int e = 0; e < events; e++) {
        for (int k = 0; k < 5; k++) {
            if (worst[k] < 0 || event_last[e] > event_last[worst[k]]) {
                for (int j = 4; j > k; j--) worst[j] = worst[j - 1];
                worst[k] = e;
                break;
            }
        }
    }
    printf("slowest events (first / last subscriber):");
    for (int k = 0; k < 5 && worst[k] >= 0; k++) {
        printf(" m%d %.1f/%.1f ms", worst[k], event_first[worst[k]] / 1000.0, event_last[worst[k]] / 1000.0);
    }
    printf("\n");
    fflush(stdout);
    _exit(0);
}
