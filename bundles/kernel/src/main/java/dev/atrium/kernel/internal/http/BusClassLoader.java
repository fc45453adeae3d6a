package dev.atrium.kernel.internal.http;

import java.lang.reflect.Method;

/**
 * Gives the whiteboard's CXF bus a {@code ClassLoader} extension, once.
 * <p>
 * Without one, CXF's {@code ServletController} asks the bus's resource manager for a class loader named "" on every
 * request; in OSGi that lookup fails through Felix's boot delegation, which walks the stack and builds an exception:
 * about 6 % of the server's CPU on an authenticated GET. The extension is the thread's context class loader as the
 * request sees it, which is the one CXF then sets around each invocation, so nothing a request sees changes. Reached
 * by reflection through the request context's own class loader, so the kernel does not import CXF; when CXF's
 * classes are not what this expects, it stops trying and requests are served as before.
 */
final class BusClassLoader {

    private volatile boolean giveUp;
    private volatile Object done;
    private Method currentMessage;
    private Method exchange;
    private Method bus;
    private Method getExtension;
    private Method setExtension;

    /** Called from a JAX-RS filter with the request context object CXF made. */
    void ensure(Object requestContext) {
        if (giveUp) {
            return;
        }
        try {
            Object b = busOf(requestContext);
            if (b == null || b == done) {
                return;
            }
            ClassLoader tccl = Thread.currentThread().getContextClassLoader();
            if (tccl != null && getExtension.invoke(b, ClassLoader.class) == null) {
                setExtension.invoke(b, tccl, ClassLoader.class);
            }
            done = b;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            giveUp = true;
        }
    }

    private synchronized Object busOf(Object requestContext) throws ReflectiveOperationException {
        if (currentMessage == null) {
            ClassLoader cxf = requestContext.getClass().getClassLoader();
            Class<?> chain = Class.forName("org.apache.cxf.phase.PhaseInterceptorChain", false, cxf);
            Class<?> message = Class.forName("org.apache.cxf.message.Message", false, cxf);
            Class<?> exchangeType = Class.forName("org.apache.cxf.message.Exchange", false, cxf);
            Class<?> busType = Class.forName("org.apache.cxf.Bus", false, cxf);
            currentMessage = chain.getMethod("getCurrentMessage");
            exchange = message.getMethod("getExchange");
            bus = exchangeType.getMethod("getBus");
            getExtension = busType.getMethod("getExtension", Class.class);
            setExtension = busType.getMethod("setExtension", Object.class, Class.class);
        }
        Object m = currentMessage.invoke(null);
        Object x = m == null ? null : exchange.invoke(m);
        return x == null ? null : bus.invoke(x);
    }
}
