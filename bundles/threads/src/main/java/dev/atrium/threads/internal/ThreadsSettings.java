package dev.atrium.threads.internal;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Operator configuration of threads (ConfigAdmin pid {@code dev.atrium.threads}). Each value is taken from the
 * {@code ATRIUM_THREADS_*} environment variable named in its description, else the framework (or system) property
 * {@code atrium.threads.<attribute>}, else the configuration.
 */
@Component(service = ThreadsSettings.class, configurationPid = "dev.atrium.threads", configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = ThreadsSettings.Config.class)
public class ThreadsSettings {

    /** The font directories searched when none is configured; a missing one is skipped. */
    static final String DEFAULT_FONT_DIRS = "/usr/share/fonts:/usr/local/share/fonts";

    @ObjectClassDefinition(name = "Atrium threads")
    public @interface Config {
        @AttributeDefinition(description = "Directories (path-separator separated) searched for TrueType fonts for characters the PDF export's "
                + "built-in font lacks; 'none' searches none (ATRIUM_THREADS_PDF_FONT_DIRS)")
        String pdfFontDirs() default DEFAULT_FONT_DIRS;

        @AttributeDefinition(description = "Bytes of page content one PDF export keeps in memory before it spills to a scratch file "
                + "(ATRIUM_THREADS_PDF_MEMORY_BYTES)")
        long pdfMemoryBytes() default 4L << 20;

        @AttributeDefinition(description = "Wrong passwords one client address may send for one share in the window before it answers "
                + "that address 429; other addresses are not affected (ATRIUM_THREADS_SHARE_MAX_FAILURES)")
        int shareMaxFailures() default 10;

        @AttributeDefinition(description = "Wrong share passwords one client address may send in the window, over all shares "
                + "(ATRIUM_THREADS_SHARE_MAX_ADDRESS_FAILURES)")
        int shareMaxAddressFailures() default 20;

        @AttributeDefinition(description = "Seconds a wrong share password counts against its share and address "
                + "(ATRIUM_THREADS_SHARE_FAILURE_WINDOW_S)")
        long shareFailureWindowSeconds() default 900;

        @AttributeDefinition(description = "Wrong share passwords the whole server takes in the window, from all addresses, before "
                + "every password attempt answers 429 (ATRIUM_THREADS_SHARE_MAX_GLOBAL_FAILURES)")
        int shareMaxGlobalFailures() default 1000;

        @AttributeDefinition(description = "Wrong share passwords from one address before its attempts are spaced by a delay "
                + "that doubles with each further one (ATRIUM_THREADS_SHARE_DELAY_AFTER_FAILURES)")
        int shareDelayAfterFailures() default 3;

        @AttributeDefinition(description = "The first delay in milliseconds; 0 turns delays off (ATRIUM_THREADS_SHARE_DELAY_BASE_MS)")
        long shareDelayBaseMillis() default 1000;

        @AttributeDefinition(description = "The longest delay in seconds (ATRIUM_THREADS_SHARE_DELAY_MAX_S)")
        long shareDelayMaxSeconds() default 60;

        @AttributeDefinition(description = "Take the client address from the last X-Forwarded-For entry: only behind a reverse proxy "
                + "that sets it, else any client names itself (ATRIUM_THREADS_TRUST_FORWARDED_FOR)")
        boolean trustForwardedFor() default false;
    }

    final List<Path> pdfFontDirs;
    final long pdfMemoryBytes;
    final int shareMaxFailures;
    final int shareMaxAddressFailures;
    final long shareFailureWindowSeconds;
    final int shareMaxGlobalFailures;
    final int shareDelayAfterFailures;
    final long shareDelayBaseMillis;
    final long shareDelayMaxSeconds;
    final boolean trustForwardedFor;

    @Activate
    public ThreadsSettings(BundleContext context, Config config) {
        String dirs = str(context, "ATRIUM_THREADS_PDF_FONT_DIRS", "pdfFontDirs", config.pdfFontDirs());
        this.pdfFontDirs = dirs(dirs);
        this.pdfMemoryBytes = num(context, "ATRIUM_THREADS_PDF_MEMORY_BYTES", "pdfMemoryBytes", config.pdfMemoryBytes());
        this.shareMaxFailures = (int) Math.min(Integer.MAX_VALUE,
                num(context, "ATRIUM_THREADS_SHARE_MAX_FAILURES", "shareMaxFailures", config.shareMaxFailures()));
        this.shareMaxAddressFailures = (int) Math.min(Integer.MAX_VALUE,
                num(context, "ATRIUM_THREADS_SHARE_MAX_ADDRESS_FAILURES", "shareMaxAddressFailures", config.shareMaxAddressFailures()));
        this.shareFailureWindowSeconds = num(context, "ATRIUM_THREADS_SHARE_FAILURE_WINDOW_S", "shareFailureWindowSeconds",
                config.shareFailureWindowSeconds());
        this.shareMaxGlobalFailures = (int) Math.min(Integer.MAX_VALUE,
                num(context, "ATRIUM_THREADS_SHARE_MAX_GLOBAL_FAILURES", "shareMaxGlobalFailures", config.shareMaxGlobalFailures()));
        this.shareDelayAfterFailures = (int) Math.min(Integer.MAX_VALUE,
                num(context, "ATRIUM_THREADS_SHARE_DELAY_AFTER_FAILURES", "shareDelayAfterFailures", config.shareDelayAfterFailures()));
        String base = str(context, "ATRIUM_THREADS_SHARE_DELAY_BASE_MS", "shareDelayBaseMillis", null);
        long baseMillis;
        try {
            baseMillis = base == null ? config.shareDelayBaseMillis() : Math.max(0, Long.parseLong(base));
        } catch (NumberFormatException e) {
            baseMillis = config.shareDelayBaseMillis();
        }
        this.shareDelayBaseMillis = baseMillis;
        this.shareDelayMaxSeconds = num(context, "ATRIUM_THREADS_SHARE_DELAY_MAX_S", "shareDelayMaxSeconds", config.shareDelayMaxSeconds());
        String trust = str(context, "ATRIUM_THREADS_TRUST_FORWARDED_FOR", "trustForwardedFor", Boolean.toString(config.trustForwardedFor()));
        this.trustForwardedFor = "true".equalsIgnoreCase(trust);
    }

    static List<Path> dirs(String value) {
        List<Path> out = new ArrayList<>();
        if (value == null || value.isBlank() || value.trim().equalsIgnoreCase("none")) {
            return out;
        }
        for (String d : value.split(File.pathSeparator)) {
            if (!d.isBlank()) {
                out.add(Path.of(d.trim()));
            }
        }
        return out;
    }

    private static String str(BundleContext context, String env, String attribute, String dflt) {
        String v = System.getenv(env);
        if (v == null || v.isBlank()) {
            v = context.getProperty("atrium.threads." + attribute);
        }
        return v == null || v.isBlank() ? dflt : v.trim();
    }

    private static long num(BundleContext context, String env, String attribute, long dflt) {
        String v = str(context, env, attribute, null);
        try {
            return v == null ? Math.max(1, dflt) : Math.max(1, Long.parseLong(v));
        } catch (NumberFormatException e) {
            return Math.max(1, dflt);
        }
    }
}
