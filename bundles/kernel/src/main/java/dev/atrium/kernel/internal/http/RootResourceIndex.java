package dev.atrium.kernel.internal.http;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.xml.namespace.QName;
import org.apache.cxf.jaxrs.JAXRSServiceImpl;

/**
 * The root resources of the JAX-RS application that a request path can match.
 *
 * <p>CXF picks a root resource by matching the path against the regular expression of every root resource of the
 * application ({@code JAXRSUtils.selectResourceClass}): over a hundred per request, and a profile of
 * {@code GET /api/spaces/:id} put 11 % of the server's time there. Most of it went to the roots below
 * {@code /api/spaces/{spaceId}/}, each of whose expressions reads the space id before it fails. A template's leading
 * segments that are literals or plain variables ({@code /api/spaces/{spaceId}/threads}) say which paths it can match
 * without an expression: the same literals at the same places, a non-empty segment for each variable. So CXF is shown
 * a service holding just the roots whose leading segments admit the path ({@link #serviceFor}).
 *
 * <p>The roots are grouped by the first two segments when those are literal ({@code /api/spaces}), so that a request
 * looks at the roots of its own group and at those whose first two segments are not literal. The services are made
 * once per set of admitted roots and kept, at most {@link #SERVICES_PER_GROUP} per group. Each is a
 * {@link JAXRSServiceImpl} like the application's, sharing its invoker, executor, endpoints, interceptors and
 * properties: CXF reads only the root resources from the exchange's service, and everything else from the endpoint's.
 *
 * <p>The roots are CXF's {@code ClassResourceInfo}s, whose package Aries does not export: their templates are read
 * reflectively, once per build of the application.
 */
final class RootResourceIndex {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RootResourceIndex.class);

    /** The application service's property under which its index is kept: an index lives as long as its application. */
    static final String PROPERTY = RootResourceIndex.class.getName();
    /** Sets of admitted roots kept per group; paths beyond them are matched against the whole group. */
    static final int SERVICES_PER_GROUP = 256;

    private final JAXRSServiceImpl all;
    /**
     * The roots whose first two segments are not literal: alone for a path of no group, and in every group. Null when
     * the application has no roots to index.
     */
    private final Group unkeyed;
    /** By the first two segments ({@code /api/spaces}). */
    private final Map<String, Group> groups;

    private RootResourceIndex(JAXRSServiceImpl all, Group unkeyed, Map<String, Group> groups) {
        this.all = all;
        this.unkeyed = unkeyed;
        this.groups = groups;
    }

    /** The index of an application's service, made on its first request and kept in the service. */
    static RootResourceIndex of(JAXRSServiceImpl service) {
        Object kept = service.get(PROPERTY);
        if (kept instanceof RootResourceIndex index) {
            return index;
        }
        RootResourceIndex index;
        try {
            index = build(service);
        } catch (RuntimeException e) {
            // never a reason to fail a request: CXF matches against every root, as it would without the index
            LOG.warn(
                    "the root resources of {} are not indexed; every request is matched against all",
                    service.getName(),
                    e);
            index = new RootResourceIndex(service, null, Map.of());
        }
        Object raced = service.putIfAbsent(PROPERTY, index);
        return raced instanceof RootResourceIndex other ? other : index;
    }

    static RootResourceIndex build(JAXRSServiceImpl service) {
        List<?> roots = service.getClassResourceInfos();
        if (roots == null) {
            return new RootResourceIndex(service, null, Map.of());
        }
        List<String[]> segments = new ArrayList<>(roots.size());
        List<String> keys = new ArrayList<>(roots.size());
        for (Object root : roots) {
            String[] leading = leadingSegments(templateOf(root));
            segments.add(leading);
            keys.add(
                    leading.length >= 2 && leading[0] != null && leading[1] != null
                            ? "/" + leading[0] + "/" + leading[1]
                            : null);
        }
        QName name = service.getName();
        Map<String, Group> groups = new HashMap<>();
        for (String key : new LinkedHashSet<>(keys)) {
            groups.put(key, group(service, name, roots, segments, keys, key));
        }
        Group unkeyed = groups.remove(null);
        if (unkeyed == null) {
            unkeyed = group(service, name, roots, segments, keys, null);
        }
        return new RootResourceIndex(service, unkeyed, Map.copyOf(groups));
    }

    /** The roots of {@code key} and the unkeyed ones, in the application's order: CXF keeps the first of equals. */
    private static Group group(
            JAXRSServiceImpl service,
            QName name,
            List<?> roots,
            List<String[]> segments,
            List<String> keys,
            String key) {
        List<Object> members = new ArrayList<>();
        List<String[]> memberSegments = new ArrayList<>();
        for (int i = 0; i < roots.size(); i++) {
            String k = keys.get(i);
            if (k == null || k.equals(key)) {
                members.add(roots.get(i));
                memberSegments.add(segments.get(i));
            }
        }
        return new Group(narrowed(service, name, members), members, memberSegments);
    }

    /** The service CXF is to match {@code path} (as CXF matches it: encoded, from a leading slash) against. */
    JAXRSServiceImpl serviceFor(String path) {
        // CXF retries a path with matrix parameters with them taken out: any root may match it
        if (unkeyed == null || path.indexOf(';') >= 0 || !path.startsWith("/")) {
            return all;
        }
        String key = keyOfPath(path);
        Group group = key == null ? unkeyed : groups.getOrDefault(key, unkeyed);
        return group.serviceFor(path, all);
    }

    /** {@code /a/b} of {@code /a/b} and of {@code /a/b/...}; null for a path of fewer than two segments. */
    static String keyOfPath(String path) {
        int first = path.indexOf('/', 1);
        if (first < 0) {
            return null;
        }
        int second = path.indexOf('/', first + 1);
        return second < 0 ? path : path.substring(0, second);
    }

    /**
     * The leading segments of a template that say which paths it can match: a literal (of unreserved characters only,
     * as CXF matches the encoded path against the encoded literal) or null for a variable without an expression of its
     * own (CXF's {@code [^/]+?}: one non-empty segment). The first other segment ends them: what follows may match any
     * number of segments. CXF drops a template's final slash.
     */
    static String[] leadingSegments(String template) {
        if (template == null) {
            return new String[0];
        }
        String t = template.startsWith("/") ? template.substring(1) : template;
        if (t.endsWith("/")) {
            t = t.substring(0, t.length() - 1);
        }
        List<String> leading = new ArrayList<>();
        if (t.isEmpty()) {
            return new String[0];
        }
        for (String segment : t.split("/", -1)) {
            if (plainVariable(segment)) {
                leading.add(null);
            } else if (!segment.isEmpty() && unreserved(segment)) {
                leading.add(segment);
            } else {
                break;
            }
        }
        return leading.toArray(new String[0]);
    }

    /** Whether the path has the leading segments: the same literals, and a non-empty segment for each variable. */
    static boolean admits(String[] leading, String path) {
        int pos = 1;
        int length = path.length();
        for (String segment : leading) {
            if (pos > length) {
                return false;
            }
            int end = path.indexOf('/', pos);
            if (end < 0) {
                end = length;
            }
            if (segment == null) {
                if (end == pos) {
                    return false;
                }
            } else if (end - pos != segment.length() || !path.regionMatches(pos, segment, 0, segment.length())) {
                return false;
            }
            pos = end + 1;
        }
        return true;
    }

    private static boolean plainVariable(String segment) {
        if (segment.length() < 3 || segment.charAt(0) != '{' || segment.charAt(segment.length() - 1) != '}') {
            return false;
        }
        for (int i = 1; i < segment.length() - 1; i++) {
            char c = segment.charAt(i);
            if (!(Character.isLetterOrDigit(c) || c == '_' || c == '-' || c == '.')) {
                return false;
            }
        }
        return true;
    }

    private static boolean unreserved(String segment) {
        for (int i = 0; i < segment.length(); i++) {
            char c = segment.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || c == '-'
                    || c == '.'
                    || c == '_'
                    || c == '~';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** A root's {@code @Path} template as CXF holds it ({@code ClassResourceInfo.getURITemplate().getValue()}). */
    private static String templateOf(Object root) {
        try {
            Object uriTemplate = root.getClass().getMethod("getURITemplate").invoke(root);
            if (uriTemplate == null) {
                return null;
            }
            Object value = uriTemplate.getClass().getMethod("getValue").invoke(uriTemplate);
            return value instanceof String s ? s : null;
        } catch (ReflectiveOperationException | RuntimeException e) {
            // an unknown shape: no leading segments, so the root is in every service, as CXF would match it anyway
            return null;
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static JAXRSServiceImpl narrowed(JAXRSServiceImpl service, QName name, List<Object> roots) {
        JAXRSServiceImpl narrowed = new JAXRSServiceImpl((List) new ArrayList<>(roots), name);
        narrowed.setInvoker(service.getInvoker());
        narrowed.setExecutor(service.getExecutor());
        narrowed.setDataBinding(service.getDataBinding());
        narrowed.setEndpoints(service.getEndpoints());
        narrowed.getInInterceptors().addAll(service.getInInterceptors());
        narrowed.getOutInterceptors().addAll(service.getOutInterceptors());
        narrowed.getInFaultInterceptors().addAll(service.getInFaultInterceptors());
        narrowed.getOutFaultInterceptors().addAll(service.getOutFaultInterceptors());
        service.forEach((k, v) -> {
            if (!PROPERTY.equals(k)) {
                narrowed.put(k, v);
            }
        });
        return narrowed;
    }

    /** Roots a path's first two segments can reach, and a service per set of them admitted so far. */
    private static final class Group {
        private final JAXRSServiceImpl whole;
        private final List<Object> roots;
        private final String[][] segments;
        private final Map<Long, JAXRSServiceImpl> byAdmitted = new ConcurrentHashMap<>();

        Group(JAXRSServiceImpl whole, List<Object> roots, List<String[]> segments) {
            this.whole = whole;
            this.roots = roots;
            this.segments = segments.toArray(new String[0][]);
        }

        JAXRSServiceImpl serviceFor(String path, JAXRSServiceImpl application) {
            if (segments.length > Long.SIZE) {
                return whole;
            }
            long admitted = 0;
            for (int i = 0; i < segments.length; i++) {
                if (admits(segments[i], path)) {
                    admitted |= 1L << i;
                }
            }
            JAXRSServiceImpl kept = byAdmitted.get(admitted);
            if (kept != null) {
                return kept;
            }
            if (byAdmitted.size() >= SERVICES_PER_GROUP) {
                return whole;
            }
            List<Object> selected = new ArrayList<>();
            for (int i = 0; i < segments.length; i++) {
                if ((admitted & (1L << i)) != 0) {
                    selected.add(roots.get(i));
                }
            }
            return byAdmitted.computeIfAbsent(admitted, a -> narrowed(application, application.getName(), selected));
        }
    }
}
