package dev.atrium.people.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.atrium.kernel.api.ApiException;
import java.awt.Color;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;

class AvatarImagesTest {

    private static byte[] encode(BufferedImage image, String format) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ImageIO.write(image, format, out);
        return out.toByteArray();
    }

    private static BufferedImage read(byte[] png) throws Exception {
        return ImageIO.read(new ByteArrayInputStream(png));
    }

    @Test
    void theFormatIsToldByTheFirstBytes() throws Exception {
        BufferedImage image = new BufferedImage(4, 4, BufferedImage.TYPE_INT_RGB);
        assertEquals("png", AvatarImages.format(encode(image, "png")));
        assertEquals("jpeg", AvatarImages.format(encode(image, "jpeg")));
        assertEquals("gif", AvatarImages.format(encode(image, "gif")));
        assertEquals("webp", AvatarImages.format("RIFF\0\0\0\0WEBPVP8 ".getBytes(StandardCharsets.ISO_8859_1)));
        assertNull(AvatarImages.format("<svg xmlns='http://www.w3.org/2000/svg'/>".getBytes(StandardCharsets.UTF_8)));
        assertNull(AvatarImages.format(new byte[] {(byte) 0x89, 'P'}));
    }

    @Test
    void theCentreSquareIsScaledToBothSizes() throws Exception {
        // left and right thirds red, the centre square blue: only blue may remain
        BufferedImage wide = new BufferedImage(300, 100, BufferedImage.TYPE_INT_RGB);
        for (int x = 0; x < 300; x++) {
            for (int y = 0; y < 100; y++) {
                wide.setRGB(x, y, x >= 100 && x < 200 ? Color.BLUE.getRGB() : Color.RED.getRGB());
            }
        }
        AvatarImages.Sized sized = AvatarImages.sized(encode(wide, "png"));
        BufferedImage large = read(sized.large());
        BufferedImage small = read(sized.small());
        assertEquals(256, large.getWidth());
        assertEquals(256, large.getHeight());
        assertEquals(64, small.getWidth());
        assertEquals(Color.BLUE.getRGB(), large.getRGB(2, 128) | 0xff000000);
        assertEquals(Color.BLUE.getRGB(), large.getRGB(253, 128) | 0xff000000);
    }

    @Test
    void aWebPImageIsReadToo() throws Exception {
        // a 1x1 lossless WebP (VP8L)
        byte[] webp = java.util.Base64.getDecoder().decode("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==");
        assertEquals("webp", AvatarImages.format(webp));
        AvatarImages.Sized sized = AvatarImages.sized(webp);
        assertEquals(256, read(sized.large()).getWidth());
        assertEquals(64, read(sized.small()).getHeight());
    }

    @Test
    void anImageClaimingHugeDimensionsIsRefusedBeforeItsPixelsAreDecoded() {
        // a PNG whose header says 100000 x 100000 pixels and that has no pixel data at all
        ByteBuffer ihdr = ByteBuffer.allocate(17);
        ihdr.put("IHDR".getBytes(StandardCharsets.US_ASCII)).putInt(100_000).putInt(100_000);
        ihdr.put((byte) 8).put((byte) 2).put((byte) 0).put((byte) 0).put((byte) 0);
        CRC32 crc = new CRC32();
        crc.update(ihdr.array());
        ByteBuffer png = ByteBuffer.allocate(8 + 4 + 17 + 4);
        png.put(new byte[] {(byte) 0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a});
        png.putInt(13).put(ihdr.array()).putInt((int) crc.getValue());
        ApiException refused = assertThrows(ApiException.class, () -> AvatarImages.sized(png.array()));
        assertEquals(400, refused.status());
        assertEquals(true, refused.getMessage().contains("100000x100000"), refused.getMessage());
    }

    @Test
    void anythingButAnImageIsUnsupportedAndATruncatedImageIsBadInput() throws Exception {
        assertEquals(
                415,
                assertThrows(ApiException.class, () -> AvatarImages.sized("hello".getBytes()))
                        .status());
        assertEquals(
                400,
                assertThrows(ApiException.class, () -> AvatarImages.sized(new byte[0]))
                        .status());
        byte[] png = encode(new BufferedImage(50, 50, BufferedImage.TYPE_INT_RGB), "png");
        byte[] cut = java.util.Arrays.copyOf(png, 40);
        assertEquals(
                400,
                assertThrows(ApiException.class, () -> AvatarImages.sized(cut)).status());
    }

    /** A PNG chunk: length, type, data, CRC. */
    private static void chunk(ByteArrayOutputStream out, String type, byte[] data) {
        ByteBuffer b = ByteBuffer.allocate(12 + data.length);
        b.putInt(data.length).put(type.getBytes(StandardCharsets.US_ASCII)).put(data);
        CRC32 crc = new CRC32();
        crc.update(b.array(), 4, 4 + data.length);
        b.putInt((int) crc.getValue());
        out.writeBytes(b.array());
    }

    @Test
    void aSmallFileOfAHugeImageIsMadeIntoAnAvatarWithinAFewMegabytesOfHeap() throws Exception {
        // 4096 x 4096, 16-bit RGBA, all zeros: about 130 KB of PNG, 134 MB once decoded whole
        int side = 4096;
        ByteArrayOutputStream png = new ByteArrayOutputStream();
        png.writeBytes(new byte[] {(byte) 0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a});
        chunk(
                png,
                "IHDR",
                ByteBuffer.allocate(13)
                        .putInt(side)
                        .putInt(side)
                        .put((byte) 16)
                        .put((byte) 6)
                        .put((byte) 0)
                        .put((byte) 0)
                        .put((byte) 0)
                        .array());
        ByteArrayOutputStream idat = new ByteArrayOutputStream();
        try (java.util.zip.DeflaterOutputStream z = new java.util.zip.DeflaterOutputStream(
                idat, new java.util.zip.Deflater(java.util.zip.Deflater.BEST_COMPRESSION))) {
            byte[] row = new byte[1 + side * 8];
            for (int y = 0; y < side; y++) {
                z.write(row);
            }
        }
        chunk(png, "IDAT", idat.toByteArray());
        chunk(png, "IEND", new byte[0]);
        byte[] upload = png.toByteArray();
        assertEquals(true, upload.length < AvatarImages.MAX_BYTES, upload.length + " bytes");

        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long thread = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(thread);
        AvatarImages.Sized sized = AvatarImages.sized(upload);
        long allocated = threads.getThreadAllocatedBytes(thread) - before;
        assertEquals(256, read(sized.large()).getWidth());
        assertEquals(
                true,
                allocated < 48L << 20,
                "making the avatar allocated " + (allocated >> 20) + " MB; decoded whole the image alone is 134 MB");
    }
}
