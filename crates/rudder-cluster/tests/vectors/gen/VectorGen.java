import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes the conformance vectors that rudder's Rust tests compare against.
 *
 * <p>Every file is plain text: '#' comment lines at the top describe the format, then one vector per
 * line with space-separated fields. Inputs that are chosen at random come from java.util.Random with a
 * fixed seed per file, so running this twice on the same JDK gives byte-identical output.
 *
 * <p>Usage: {@code javac -d /tmp/vg VectorGen.java && java -cp /tmp/vg VectorGen <outdir>}
 */
public final class VectorGen {
    private VectorGen() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: java -cp <classes> VectorGen <outdir>");
            System.exit(2);
        }
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        WarmupVectors.writeWarmup(out.resolve("warmup.txt"));
        WarmupVectors.writeGetWeight(out.resolve("getweight.txt"));
        RoundRobinVectors.write(out.resolve("roundrobin.txt"));
        ConsistentHashVectors.write(out.resolve("consistenthash.txt"), out.resolve("ring_points.txt"));
        JavaNumberVectors.writeDoubles(out.resolve("java_double.txt"));
        JavaNumberVectors.writeFloats(out.resolve("java_float.txt"));
        UrlEncodeVectors.write(out.resolve("urlencode.txt"));
    }
}
