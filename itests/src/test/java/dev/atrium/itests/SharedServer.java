package dev.atrium.itests;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * A test class that runs on the run's shared server ({@link AtriumServer.Extension}). Such classes run one after
 * another, in their class order, on one thread, as if the suite were sequential: some of them update bundles, switch
 * features or drop jars into the deploy directory of that server, and the last ones (the route sweep, fsck) look at
 * what the others left. Classes that launch servers of their own run beside them; classes marked {@code @Isolated}
 * run alone after all of these (junit-platform.properties).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(AtriumServer.Extension.class)
@Execution(ExecutionMode.SAME_THREAD)
@interface SharedServer {}
