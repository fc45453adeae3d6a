package dev.atrium.people.internal;

import dev.atrium.kernel.api.ApiException;
import java.awt.Graphics2D;
import java.awt.Rectangle;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Iterator;
import java.util.List;
import javax.imageio.ImageIO;
import javax.imageio.ImageReadParam;
import javax.imageio.ImageReader;
import javax.imageio.stream.ImageInputStream;

/**
 * An uploaded avatar made into the squares it is served in: the format is told by the first bytes (not by the
 * client's Content-Type), its dimensions are read before any pixel is decoded (a small file may claim a huge
 * image), only the centre square is decoded, subsampled to at most twice the served size, then scaled and written as
 * PNG.
 */
final class AvatarImages {

    /** The largest upload, in bytes. */
    static final int MAX_BYTES = 1024 * 1024;
    /** The largest side of an uploaded image, in pixels. */
    static final int MAX_SIDE = 4096;

    static final int LARGE = 256;
    static final int SMALL = 64;

    record Sized(byte[] large, byte[] small) {}

    private AvatarImages() {}

    /** {@code png}, {@code jpeg}, {@code gif} or {@code webp} by magic bytes; null for anything else. */
    static String format(byte[] b) {
        if (b.length >= 8
                && (b[0] & 0xff) == 0x89
                && b[1] == 'P'
                && b[2] == 'N'
                && b[3] == 'G'
                && b[4] == 0x0d
                && b[5] == 0x0a
                && b[6] == 0x1a
                && b[7] == 0x0a) {
            return "png";
        }
        if (b.length >= 3 && (b[0] & 0xff) == 0xff && (b[1] & 0xff) == 0xd8 && (b[2] & 0xff) == 0xff) {
            return "jpeg";
        }
        if (b.length >= 6
                && b[0] == 'G'
                && b[1] == 'I'
                && b[2] == 'F'
                && b[3] == '8'
                && (b[4] == '7' || b[4] == '9')
                && b[5] == 'a') {
            return "gif";
        }
        if (b.length >= 12
                && b[0] == 'R'
                && b[1] == 'I'
                && b[2] == 'F'
                && b[3] == 'F'
                && b[8] == 'W'
                && b[9] == 'E'
                && b[10] == 'B'
                && b[11] == 'P') {
            return "webp";
        }
        return null;
    }

    static Sized sized(byte[] upload) {
        if (upload.length == 0) {
            throw ApiException.badRequest("send the image as the request body");
        }
        if (upload.length > MAX_BYTES) {
            throw new ApiException(413, "PAYLOAD_TOO_LARGE", "an avatar may be at most " + MAX_BYTES + " bytes");
        }
        String format = format(upload);
        if (format == null) {
            throw new ApiException(415, "UNSUPPORTED_MEDIA_TYPE", "an avatar must be a PNG, JPEG, GIF or WebP image");
        }
        BufferedImage image = decode(upload, format);
        return new Sized(png(square(image, LARGE)), png(square(image, SMALL)));
    }

    private static BufferedImage decode(byte[] upload, String format) {
        try (ImageInputStream in = ImageIO.createImageInputStream(new ByteArrayInputStream(upload))) {
            // ImageIO's registry does not see plugins inside a bundle: the WebP reader is made directly
            Iterator<ImageReader> readers = "webp".equals(format)
                    ? List.of(new com.twelvemonkeys.imageio.plugins.webp.WebPImageReaderSpi()
                                    .createReaderInstance(null))
                            .iterator()
                    : ImageIO.getImageReadersByFormatName(format);
            if (!readers.hasNext()) {
                throw new ApiException(
                        415,
                        "UNSUPPORTED_MEDIA_TYPE",
                        "this server cannot read " + format + " images; send PNG, JPEG or GIF");
            }
            ImageReader reader = readers.next();
            try {
                reader.setInput(in, true, true);
                int width = reader.getWidth(0);
                int height = reader.getHeight(0);
                if (width < 1 || height < 1 || width > MAX_SIDE || height > MAX_SIDE) {
                    throw ApiException.badRequest("an avatar may be at most " + MAX_SIDE
                            + " pixels wide and high; this one is " + width + "x" + height);
                }
                // only the centre square is decoded, every step-th pixel of it: what is kept is at most twice the
                // large size a side, so a small file that inflates to a big image (a 4096x4096 16-bit PNG of zeros is
                // 130 KB and 134 MB of pixels) costs a few MB of heap, not the whole image
                int crop = Math.min(width, height);
                int step = Math.max(1, crop / (2 * LARGE));
                ImageReadParam param = reader.getDefaultReadParam();
                param.setSourceRegion(new Rectangle((width - crop) / 2, (height - crop) / 2, crop, crop));
                param.setSourceSubsampling(step, step, 0, 0);
                BufferedImage image = reader.read(0, param);
                if (image == null) {
                    throw ApiException.badRequest("the image could not be read");
                }
                return image;
            } finally {
                reader.dispose();
            }
        } catch (IOException | RuntimeException e) {
            if (e instanceof ApiException api) {
                throw api;
            }
            throw ApiException.badRequest("the " + format + " image could not be read: it is damaged or incomplete");
        }
    }

    /** The centre square of {@code image}, scaled to {@code side} pixels. */
    static BufferedImage square(BufferedImage image, int side) {
        int crop = Math.min(image.getWidth(), image.getHeight());
        int x = (image.getWidth() - crop) / 2;
        int y = (image.getHeight() - crop) / 2;
        BufferedImage out = new BufferedImage(side, side, BufferedImage.TYPE_INT_ARGB);
        Graphics2D g = out.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_INTERPOLATION, RenderingHints.VALUE_INTERPOLATION_BICUBIC);
            g.setRenderingHint(RenderingHints.KEY_RENDERING, RenderingHints.VALUE_RENDER_QUALITY);
            g.drawImage(image, 0, 0, side, side, x, y, x + crop, y + crop, null);
        } finally {
            g.dispose();
        }
        return out;
    }

    static byte[] png(BufferedImage image) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            if (!ImageIO.write(image, "png", out)) {
                throw new IllegalStateException("no PNG writer");
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out.toByteArray();
    }
}
