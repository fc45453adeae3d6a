package dev.atrium.git.http.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Authenticator;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.repos.api.RepositoryRegistry.PushLock;
import dev.atrium.repos.api.RepositoryRegistry.RefChange;
import jakarta.servlet.ReadListener;
import jakarta.servlet.Servlet;
import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jgit.errors.PackProtocolException;
import org.eclipse.jgit.http.server.GitServlet;
import org.eclipse.jgit.http.server.GitSmartHttpTools;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.eclipse.jgit.transport.PacketLineIn;
import org.eclipse.jgit.transport.ReceiveCommand;
import org.eclipse.jgit.transport.ReceivePack;
import org.eclipse.jgit.transport.ServiceMayNotContinueException;
import org.eclipse.jgit.transport.UploadPack;
import org.eclipse.jgit.transport.UploadPackInternalServerErrorException;
import org.eclipse.jgit.transport.resolver.ServiceNotEnabledException;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Git smart HTTP at {@code /git/:owner/:repo.git/...} (protocol v0 and v2) on JGit's {@link GitServlet}. Who
 * may read or push is decided here, before JGit sees the request, from the kernel's answers: anyone clones a
 * public repository; a private one and every push need HTTP Basic with a Principal token as the password.
 */
@Component(
        service = Servlet.class,
        configurationPid = "dev.atrium.git.http",
        configurationPolicy = ConfigurationPolicy.OPTIONAL,
        property = {"osgi.http.whiteboard.servlet.pattern=/git/*", "osgi.http.whiteboard.servlet.name=atrium-git"})
@Designate(ocd = GitHttpServlet.Config.class)
public class GitHttpServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(GitHttpServlet.class);
    private final transient GitMeters meters;
    private final String servedBy;
    private static final Pattern PATH =
            Pattern.compile("^/([^/]+)/([^/]+?)(?:\\.git)?/(info/refs|git-upload-pack|git-receive-pack)$");
    private static final String UPLOAD = "git-upload-pack";
    private static final String RECEIVE = "git-receive-pack";
    private static final String REPOSITORY = GitHttpServlet.class.getName() + ".repository";
    private static final String CALLER = GitHttpServlet.class.getName() + ".caller";

    @ObjectClassDefinition(name = "Atrium Git smart HTTP")
    public @interface Config {
        @AttributeDefinition(
                description = "Largest request body (a pushed pack) in bytes (by default ATRIUM_GIT_MAX_BODY_BYTES)")
        long maxBodyBytes() default 2L << 30;

        @AttributeDefinition(description = "Seconds a push waits for another push to the same repository before 409")
        int pushWaitSeconds() default 30;

        @AttributeDefinition(description = "Seconds of client silence before a Git transfer is abandoned")
        int timeoutSeconds() default 300;

        @AttributeDefinition(
                description =
                        "Milliseconds a request waits for the repositories capability while it is being updated, before 503")
        long registryWaitMillis() default 10_000;
    }

    private final transient SpaceDirectory spaces;
    private final transient OwnerScope ownerScope;
    private final transient Authenticator authenticator;
    /** Dynamic: the servlet outlives an update of the repos bundle, and requests wait for its new revision. */
    private transient volatile RepositoryRegistry registry;

    /** Capabilities' checks of pushes (Actions refuses a workflow file that does not parse). */
    @Reference(
            service = dev.atrium.repos.api.PushCheck.class,
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY,
            fieldOption = org.osgi.service.component.annotations.FieldOption.UPDATE)
    private final transient java.util.List<dev.atrium.repos.api.PushCheck> pushChecks =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    private final transient Object registryLock = new Object();
    private final long registryWaitMillis;
    private final long maxBodyBytes;
    private final Duration pushWait;
    private final int timeoutSeconds;
    private final transient GitServlet git = new GitServlet();

    @Activate
    public GitHttpServlet(
            @Reference SpaceDirectory spaces,
            @Reference OwnerScope ownerScope,
            @Reference Authenticator authenticator,
            @Reference GitMeters meters,
            Config config,
            org.osgi.framework.BundleContext context) {
        this.meters = meters;
        this.servedBy = context.getBundle().getSymbolicName() + "/"
                + context.getBundle().getVersion();
        this.spaces = spaces;
        this.ownerScope = ownerScope;
        this.authenticator = authenticator;
        this.registryWaitMillis = config.registryWaitMillis();
        this.maxBodyBytes = config.maxBodyBytes();
        this.pushWait = Duration.ofSeconds(config.pushWaitSeconds());
        this.timeoutSeconds = config.timeoutSeconds();
        git.setRepositoryResolver((req, name) -> {
            Repository r = (Repository) req.getAttribute(REPOSITORY);
            if (r == null) {
                throw new ServiceNotEnabledException();
            }
            try {
                if (req.getRequestURI().endsWith("/git-receive-pack")) {
                    return repositories().openForPush(r);
                }
                return new FileRepositoryBuilder()
                        .setGitDir(repositories().directory(r).toFile())
                        .setMustExist(true)
                        .build();
            } catch (IOException e) {
                throw new IllegalStateException("the Git directory of " + r.id() + " cannot be opened", e);
            }
        });
        git.setUploadPackFactory((req, db) -> {
            UploadPack up = new UploadPack(db);
            up.setTimeout(timeoutSeconds);
            // protocol v2 is asked for in this header ("version=2", parameters separated by ':')
            String protocol = req.getHeader("Git-Protocol");
            if (protocol != null) {
                up.setExtraParameters(java.util.Arrays.asList(protocol.split(":")));
            }
            return up;
        });
        git.setReceivePackFactory((req, db) -> receivePack(req, db));
        git.setUploadPackErrorHandler(GitHttpServlet::upload);
    }

    /**
     * JGit's own handler, except that a request the client got wrong (pkt-lines that do not parse, a body that
     * ends early) is a 400 saying so, not a 500 "Internal server error" logged as ours.
     */
    private static void upload(
            HttpServletRequest req,
            HttpServletResponse rsp,
            org.eclipse.jgit.http.server.UploadPackErrorHandler.UploadPackRunnable r)
            throws IOException {
        try {
            r.upload();
        } catch (ServiceMayNotContinueException e) {
            if (!e.isOutput() && !rsp.isCommitted()) {
                rsp.reset();
                GitSmartHttpTools.sendError(req, rsp, e.getStatusCode(), e.getMessage());
            }
        } catch (Throwable e) {
            boolean client = clientsFault(e);
            if (client) {
                LOG.debug("malformed upload-pack request to {}", req.getRequestURI(), e);
            } else {
                LOG.error("upload-pack failed for {}", req.getRequestURI(), e);
            }
            if (!rsp.isCommitted()) {
                rsp.reset();
                Throwable cause =
                        e instanceof UploadPackInternalServerErrorException && e.getCause() != null ? e.getCause() : e;
                GitSmartHttpTools.sendError(
                        req,
                        rsp,
                        client ? 400 : org.eclipse.jgit.http.server.UploadPackErrorHandler.statusCodeForThrowable(e),
                        client ? "not a valid upload-pack request: " + cause.getMessage() : null);
            }
        }
    }

    /** Whether an upload-pack failure comes from the request's bytes (parsing its pkt-lines), not from the server. */
    static boolean clientsFault(Throwable e) {
        Throwable t = e instanceof UploadPackInternalServerErrorException && e.getCause() != null ? e.getCause() : e;
        if (t instanceof PackProtocolException || t instanceof EOFException) {
            return true;
        }
        StackTraceElement[] at = t.getStackTrace();
        return t instanceof IOException && at.length > 0 && at[0].getClassName().equals(PacketLineIn.class.getName());
    }

    /**
     * The request, with its body readable from the start again, when the body starts as every Git request does
     * (four hex digits, a pkt-line length); null when it does not.
     */
    static HttpServletRequest startingWithPktLine(HttpServletRequest req) throws IOException {
        BufferedInputStream in = new BufferedInputStream(req.getInputStream(), 8192);
        in.mark(4);
        byte[] head = in.readNBytes(4);
        in.reset();
        if (head.length < 4) {
            return null;
        }
        for (byte b : head) {
            if (Character.digit(b, 16) < 0) {
                return null;
            }
        }
        ServletInputStream body = new ServletInputStream() {
            private boolean finished;

            @Override
            public int read() throws IOException {
                int b = in.read();
                finished = b < 0;
                return b;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = in.read(b, off, len);
                finished = n < 0;
                return n;
            }

            @Override
            public boolean isFinished() {
                return finished;
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setReadListener(ReadListener listener) {
                throw new UnsupportedOperationException("Git bodies are read blocking");
            }
        };
        return new HttpServletRequestWrapper(req) {
            @Override
            public ServletInputStream getInputStream() {
                return body;
            }
        };
    }

    /** Whether every %-escape of {@code query} is well formed and the bytes they make are UTF-8 (Jetty throws otherwise). */
    static boolean validQuery(String query) {
        if (query == null) {
            return true;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int i = 0; i < query.length(); i++) {
            char c = query.charAt(i);
            if (c == '%') {
                int hi = i + 2 < query.length() ? Character.digit(query.charAt(i + 1), 16) : -1;
                int lo = i + 2 < query.length() ? Character.digit(query.charAt(i + 2), 16) : -1;
                if (hi < 0 || lo < 0) {
                    return false;
                }
                bytes.write(hi << 4 | lo);
                i += 2;
            } else if (c > 0x7f) {
                return false;
            } else {
                bytes.write(c);
            }
        }
        try {
            StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes.toByteArray()));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    @Override
    public void init(ServletConfig config) throws ServletException {
        super.init(config);
        git.init(config);
    }

    @Override
    public void destroy() {
        git.destroy();
        super.destroy();
    }

    private ReceivePack receivePack(HttpServletRequest req, org.eclipse.jgit.lib.Repository db) {
        Repository r = (Repository) req.getAttribute(REPOSITORY);
        Caller caller = (Caller) req.getAttribute(CALLER);
        ReceivePack rp = new ReceivePack(db);
        rp.setTimeout(timeoutSeconds);
        rp.setAllowNonFastForwards(r.allowForcePush());
        rp.setAllowDeletes(true);
        rp.setAtomic(true);
        rp.setMaxPackSizeLimit(maxBodyBytes);
        rp.setRefLogIdent(new PersonIdent(caller.principalId(), caller.principalId() + "@users.noreply.atrium"));
        // the same fsck rules and ref-name rules as every other way into a repository (bundle, import, fork)
        rp.setObjectChecker(repositories().newObjectChecker());
        rp.setPreReceiveHook(new PushRules(repositories(), r, () -> collisionProblem(db), pushChecks));
        rp.setPostReceiveHook((pack, commands) -> {
            List<RefChange> changes = new ArrayList<>();
            for (ReceiveCommand c : commands) {
                if (c.getResult() == ReceiveCommand.Result.OK) {
                    changes.add(new RefChange(
                            c.getRefName(), c.getOldId().name(), c.getNewId().name()));
                }
            }
            repositories().pushed(r, caller.principalId(), changes);
        });
        return rp;
    }

    /** What the SHA-1 collision check found in the objects this push sent, or null when they passed. */
    private String collisionProblem(org.eclipse.jgit.lib.Repository db) {
        try {
            repositories().awaitCollisionCheck(db);
            return null;
        } catch (IOException e) {
            return e.getMessage();
        }
    }

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void bindRepositories(RepositoryRegistry r) {
        synchronized (registryLock) {
            registry = r;
            registryLock.notifyAll();
        }
    }

    void unbindRepositories(RepositoryRegistry r) {
        synchronized (registryLock) {
            if (registry == r) {
                registry = null;
            }
        }
    }

    /** The repositories capability, waiting (bounded) while it restarts; {@link RegistryGone} when it does not come back. */
    private RepositoryRegistry repositories() {
        RepositoryRegistry current = registry;
        if (current != null) {
            return current;
        }
        synchronized (registryLock) {
            long deadline = System.nanoTime() + registryWaitMillis * 1_000_000;
            while (registry == null) {
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    throw new RegistryGone();
                }
                try {
                    registryLock.wait(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new RegistryGone();
                }
            }
            return registry;
        }
    }

    /** The repositories capability is disabled or did not come back from an update in time. */
    private static final class RegistryGone extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RegistryGone() {
            super("repositories are not available on this server right now", null, false, false);
        }
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
        try {
            serveGit(req, resp);
        } catch (RegistryGone e) {
            if (!resp.isCommitted()) {
                resp.setHeader("Retry-After", "5");
                fail(resp, 503, e.getMessage());
            }
        }
    }

    private void serveGit(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
        String path = req.getPathInfo();
        Matcher m = path == null ? null : PATH.matcher(path);
        if (m == null || !m.matches()) {
            fail(
                    resp,
                    404,
                    "not a Git smart HTTP path: expected /git/:owner/:repo.git/info/refs, git-upload-pack or git-receive-pack");
            return;
        }
        String owner = m.group(1);
        String name = m.group(2);
        String endpoint = m.group(3);
        req.setAttribute(dev.atrium.kernel.api.KernelExtensions.ROUTE_ATTRIBUTE, "/git/{owner}/{repo}/" + endpoint);
        resp.setHeader(dev.atrium.kernel.api.KernelExtensions.SERVED_BY_HEADER, servedBy);
        if (!validQuery(req.getQueryString())) {
            fail(resp, 400, "the query string is not valid: a %-escape is malformed or the bytes are not UTF-8");
            return;
        }
        String service;
        if (endpoint.equals("info/refs")) {
            if (!"GET".equals(req.getMethod()) && !"HEAD".equals(req.getMethod())) {
                fail(resp, 405, "info/refs answers GET");
                return;
            }
            service = req.getParameter("service");
            if (!UPLOAD.equals(service) && !RECEIVE.equals(service)) {
                fail(
                        resp,
                        403,
                        "only the smart protocol is served: ?service= must be git-upload-pack or git-receive-pack");
                return;
            }
        } else {
            if (!"POST".equals(req.getMethod())) {
                fail(resp, 405, endpoint + " answers POST");
                return;
            }
            service = endpoint;
            String type = "application/x-" + service + "-request";
            // JGit answers any other type with the container's own 415 page (HTML or JSON); say it in Git's terms
            if (!type.equals(req.getContentType())) {
                fail(resp, 415, endpoint + " takes Content-Type: " + type);
                return;
            }
        }
        long length = req.getContentLengthLong();
        if (length > maxBodyBytes) {
            fail(resp, 413, "the request body is " + length + " bytes; the limit is " + maxBodyBytes);
            return;
        }
        boolean push = RECEIVE.equals(service);
        Caller caller;
        try {
            caller = authenticate(req.getHeader("Authorization"));
        } catch (ApiException e) {
            if (e.status() == 401) {
                challenge(resp, e.getMessage());
            } else {
                fail(resp, e.status(), e.getMessage());
            }
            return;
        }
        Optional<SpaceRef> space = spaces.byOwnerName(owner);
        Optional<Repository> repo = space.flatMap(s -> repositories().find(s.id(), name));
        boolean owned =
                repo.isPresent() && caller != null && owns(caller, repo.get().spaceId());
        boolean readable = repo.isPresent() && (owned || repo.get().isPublic());
        if (caller == null && (push || !readable)) {
            // anonymous: a private repository and a missing one look the same, and both ask for credentials
            challenge(
                    resp,
                    push
                            ? "pushing needs authentication: a personal access token as the password"
                            : "authentication required");
            return;
        }
        if (!readable) {
            fail(resp, 404, "repository not found");
            return;
        }
        if (push && !owned) {
            fail(resp, 403, "only the owner of this repository may push to it");
            return;
        }
        if (caller != null && !caller.hasScope(push ? "repos:write" : "repos:read")) {
            fail(resp, 403, "this token lacks the scope " + (push ? "repos:write" : "repos:read"));
            return;
        }
        req.setAttribute(REPOSITORY, repo.get());
        if (caller != null) {
            req.setAttribute(CALLER, caller);
        }
        if (!endpoint.equals("info/refs") && req.getHeader("Content-Encoding") == null) {
            req = startingWithPktLine(req);
            if (req == null) {
                // receive-pack has no error handler of ours: JGit would answer this 500 "Internal server error"
                fail(resp, 400, "the body is not a Git pkt-line stream: it must start with a 4-digit hex length");
                return;
            }
        }
        if (push && !endpoint.equals("info/refs")) {
            PushLock lock;
            try {
                lock = repositories().lockForPush(repo.get(), pushWait);
            } catch (ApiException e) {
                fail(resp, e.status(), e.getMessage());
                return;
            }
            try (lock) {
                meters.measure(true, req, resp, git::service);
            }
            return;
        }
        if (endpoint.equals("info/refs")) {
            git.service(req, resp);
        } else {
            meters.measure(false, req, resp, git::service);
        }
    }

    private boolean owns(Caller caller, String spaceId) {
        try {
            ownerScope.require(caller, spaceId);
            return true;
        } catch (ApiException notOwner) {
            return false;
        }
    }

    /** The caller of an {@code Authorization} header (Basic with the token as password, or Bearer); null without one. */
    private Caller authenticate(String header) {
        if (header == null || header.isBlank()) {
            return null;
        }
        String secret;
        if (header.regionMatches(true, 0, "Basic ", 0, 6)) {
            String decoded;
            try {
                decoded = new String(
                        Base64.getDecoder().decode(header.substring(6).trim()), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw ApiException.unauthorized("the Basic credentials are not valid base64");
            }
            int colon = decoded.indexOf(':');
            secret = colon < 0 ? decoded : decoded.substring(colon + 1);
        } else if (header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            secret = header.substring(7).trim();
        } else {
            throw ApiException.unauthorized("use HTTP Basic with a personal access token as the password");
        }
        return authenticator.authenticate(secret);
    }

    private static void challenge(HttpServletResponse resp, String message) throws IOException {
        resp.setHeader("WWW-Authenticate", "Basic realm=\"atrium\"");
        fail(resp, 401, message);
    }

    private static void fail(HttpServletResponse resp, int status, String message) throws IOException {
        if (resp.isCommitted()) {
            LOG.warn("Git response already committed; could not send {} {}", status, message);
            return;
        }
        resp.setStatus(status);
        resp.setContentType("text/plain; charset=utf-8");
        resp.setHeader("Cache-Control", "no-cache");
        resp.getWriter().println(message);
    }
}
