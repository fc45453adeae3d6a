package dev.atrium.threads.internal;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Operator configuration of threads (ConfigAdmin pid {@code dev.atrium.threads}). Where the operator's configuration
 * sets nothing, the {@code ATRIUM_THREADS_*} environment variable named in a description supplies the value, else the
 * framework property {@code atrium.threads.<attribute>} (bundles/config).
 */
@Component(
        service = ThreadsSettings.class,
        configurationPid = "dev.atrium.threads",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = ThreadsSettings.Config.class)
public class ThreadsSettings {

    /** The font directories searched when none is configured; a missing one is skipped. */
    static final String DEFAULT_FONT_DIRS = "/usr/share/fonts:/usr/local/share/fonts";

    @ObjectClassDefinition(name = "Atrium threads")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "Directories (path-separator separated) searched for TrueType fonts for characters the PDF export's "
                                + "built-in font lacks; 'none' searches none (ATRIUM_THREADS_PDF_FONT_DIRS)")
        String pdfFontDirs() default DEFAULT_FONT_DIRS;

        @AttributeDefinition(
                description = "Bytes of page content one PDF export keeps in memory before it spills to a scratch file "
                        + "(ATRIUM_THREADS_PDF_MEMORY_BYTES)")
        long pdfMemoryBytes() default 4L << 20;

        @AttributeDefinition(
                description =
                        "Wrong passwords one client address may send for one share in the window before it answers "
                                + "that address 429; other addresses are not affected (ATRIUM_THREADS_SHARE_MAX_FAILURES)")
        int shareMaxFailures() default 10;

        @AttributeDefinition(
                description = "Wrong share passwords one client address may send in the window, over all shares "
                        + "(ATRIUM_THREADS_SHARE_MAX_ADDRESS_FAILURES)")
        int shareMaxAddressFailures() default 20;

        @AttributeDefinition(
                description = "Seconds a wrong share password counts against its share and address "
                        + "(ATRIUM_THREADS_SHARE_FAILURE_WINDOW_S)")
        long shareFailureWindowSeconds() default 900;

        @AttributeDefinition(
                description = "Wrong share passwords the whole server takes in the window, from all addresses, before "
                        + "every password attempt answers 429 (ATRIUM_THREADS_SHARE_MAX_GLOBAL_FAILURES)")
        int shareMaxGlobalFailures() default 1000;

        @AttributeDefinition(
                description = "Wrong share passwords from one address before its attempts are spaced by a delay "
                        + "that doubles with each further one (ATRIUM_THREADS_SHARE_DELAY_AFTER_FAILURES)")
        int shareDelayAfterFailures() default 3;

        @AttributeDefinition(
                description =
                        "The first delay in milliseconds; 0 turns delays off (ATRIUM_THREADS_SHARE_DELAY_BASE_MS)")
        long shareDelayBaseMillis() default 1000;

        @AttributeDefinition(description = "The longest delay in seconds (ATRIUM_THREADS_SHARE_DELAY_MAX_S)")
        long shareDelayMaxSeconds() default 60;

        @AttributeDefinition(
                description =
                        "Take the client address from the last X-Forwarded-For entry: only behind a reverse proxy "
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
    public ThreadsSettings(Config config) {
        this.pdfFontDirs = dirs(config.pdfFontDirs());
        this.pdfMemoryBytes = Math.max(1, config.pdfMemoryBytes());
        this.shareMaxFailures = Math.max(1, config.shareMaxFailures());
        this.shareMaxAddressFailures = Math.max(1, config.shareMaxAddressFailures());
        this.shareFailureWindowSeconds = Math.max(1, config.shareFailureWindowSeconds());
        this.shareMaxGlobalFailures = Math.max(1, config.shareMaxGlobalFailures());
        this.shareDelayAfterFailures = Math.max(1, config.shareDelayAfterFailures());
        this.shareDelayBaseMillis = Math.max(0, config.shareDelayBaseMillis());
        this.shareDelayMaxSeconds = Math.max(1, config.shareDelayMaxSeconds());
        this.trustForwardedFor = config.trustForwardedFor();
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
}
