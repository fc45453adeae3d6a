package dev.atrium.billing.internal;

import dev.atrium.billing.api.BillingProvider;
import dev.atrium.billing.api.BillingProvider.Invoice;
import dev.atrium.kernel.api.ApiException;
import jakarta.mail.Authenticator;
import jakarta.mail.MessagingException;
import jakarta.mail.PasswordAuthentication;
import jakarta.mail.Session;
import jakarta.mail.Transport;
import jakarta.mail.internet.InternetAddress;
import jakarta.mail.internet.MimeBodyPart;
import jakarta.mail.internet.MimeMessage;
import jakarta.mail.internet.MimeMultipart;
import jakarta.mail.util.ByteArrayDataSource;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.PDPage;
import org.apache.pdfbox.pdmodel.PDPageContentStream;
import org.apache.pdfbox.pdmodel.common.PDRectangle;
import org.apache.pdfbox.pdmodel.font.PDType1Font;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** An invoice as a PDF (the provider's, else one rendered here) and as a mail with that PDF attached. */
@Component(service = InvoiceDocuments.class)
public class InvoiceDocuments {

    /** The largest invoice PDF read from a provider. */
    static final int MAX_PDF_BYTES = 20 * 1024 * 1024;

    private final BillingSettings settings;

    @Activate
    public InvoiceDocuments(@Reference BillingSettings settings) {
        this.settings = settings;
    }

    /** The invoice's PDF bytes. */
    byte[] pdf(BillingProvider provider, Invoice invoice) throws IOException {
        Optional<InputStream> theirs = provider.invoicePdf(invoice);
        if (theirs.isPresent()) {
            try (InputStream in = theirs.get()) {
                byte[] bytes = in.readNBytes(MAX_PDF_BYTES + 1);
                if (bytes.length > MAX_PDF_BYTES) {
                    throw new IOException("the provider's invoice PDF is larger than " + MAX_PDF_BYTES + " bytes");
                }
                return bytes;
            }
        }
        return render(invoice);
    }

    static byte[] render(Invoice invoice) throws IOException {
        try (PDDocument doc = new PDDocument();
                ByteArrayOutputStream out = new ByteArrayOutputStream()) {
            PDPage page = new PDPage(PDRectangle.A4);
            doc.addPage(page);
            try (PDPageContentStream text = new PDPageContentStream(doc, page)) {
                text.beginText();
                text.setFont(PDType1Font.HELVETICA_BOLD, 18);
                text.newLineAtOffset(56, 770);
                text.showText("Invoice " + ascii(invoice.number().isEmpty() ? invoice.id() : invoice.number()));
                text.setFont(PDType1Font.HELVETICA, 11);
                text.setLeading(16);
                text.newLine();
                text.newLine();
                String date = invoice.created() == null
                        ? ""
                        : DateTimeFormatter.ISO_LOCAL_DATE.format(
                                invoice.created().atOffset(ZoneOffset.UTC));
                for (String line : new String[] {
                    "Date: " + date,
                    "Status: " + invoice.status(),
                    "Amount due: " + money(invoice.amountDueMinor(), invoice.currency()),
                    "Amount paid: " + money(invoice.amountPaidMinor(), invoice.currency())
                }) {
                    text.showText(ascii(line));
                    text.newLine();
                }
                text.endText();
            }
            doc.save(out);
            return out.toByteArray();
        }
    }

    private static String money(long minor, String currency) {
        return String.format(
                Locale.ROOT, "%d.%02d %s", minor / 100, Math.abs(minor % 100), currency.toUpperCase(Locale.ROOT));
    }

    /** The standard 14 fonts encode WinAnsi only: anything else becomes '?'. */
    private static String ascii(String s) {
        return s == null ? "" : s.replaceAll("[^\\x20-\\x7E]", "?");
    }

    boolean mailConfigured() {
        return !settings.smtpHost.isEmpty() && !settings.smtpFrom.isEmpty();
    }

    /** Mails the invoice with its PDF attached to {@code to}. */
    void mail(Invoice invoice, byte[] pdf, String to) throws IOException {
        if (!mailConfigured()) {
            throw new ApiException(
                    404,
                    "MAIL_NOT_CONFIGURED",
                    "mail is not configured on this server (ATRIUM_SMTP_HOST, ATRIUM_SMTP_FROM)");
        }
        Properties p = new Properties();
        p.put("mail.smtp.host", settings.smtpHost);
        p.put("mail.smtp.port", String.valueOf(settings.smtpPort));
        p.put("mail.smtp.connectiontimeout", "10000");
        p.put("mail.smtp.timeout", "30000");
        p.put("mail.smtp.writetimeout", "30000");
        switch (settings.smtpSecurity) {
            case "none" -> {}
            case "tls" -> p.put("mail.smtp.ssl.enable", "true");
            default -> {
                p.put("mail.smtp.starttls.enable", "true");
                p.put("mail.smtp.starttls.required", "true");
            }
        }
        Authenticator auth = null;
        if (!settings.smtpUsername.isEmpty()) {
            p.put("mail.smtp.auth", "true");
            auth = new Authenticator() {
                @Override
                protected PasswordAuthentication getPasswordAuthentication() {
                    return new PasswordAuthentication(settings.smtpUsername, settings.smtpPassword);
                }
            };
        }
        Thread thread = Thread.currentThread();
        ClassLoader before = thread.getContextClassLoader();
        // Jakarta Mail finds its providers through the context class loader: this bundle's holds them
        thread.setContextClassLoader(InvoiceDocuments.class.getClassLoader());
        try {
            Session session = Session.getInstance(p, auth);
            MimeMessage m = new MimeMessage(session);
            m.setFrom(new InternetAddress(settings.smtpFrom));
            m.setRecipients(MimeMessage.RecipientType.TO, InternetAddress.parse(to, true));
            String name = invoice.number().isEmpty() ? invoice.id() : invoice.number();
            m.setSubject("Invoice " + name, "UTF-8");
            MimeBodyPart body = new MimeBodyPart();
            body.setText(
                    "Your invoice " + name + " is attached.\n\nAmount due: "
                            + money(invoice.amountDueMinor(), invoice.currency()) + "\nStatus: " + invoice.status()
                            + (invoice.hostedUrl().isEmpty() ? "" : "\nPay or view online: " + invoice.hostedUrl())
                            + "\n",
                    "UTF-8");
            MimeBodyPart attachment = new MimeBodyPart();
            attachment.setDataHandler(
                    new jakarta.activation.DataHandler(new ByteArrayDataSource(pdf, "application/pdf")));
            attachment.setFileName("invoice-" + name.replaceAll("[^A-Za-z0-9._-]", "_") + ".pdf");
            m.setContent(new MimeMultipart(body, attachment));
            Transport.send(m);
        } catch (MessagingException e) {
            throw new IOException("the SMTP server did not take the mail: " + e.getMessage(), e);
        } finally {
            thread.setContextClassLoader(before);
        }
    }
}
