import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * Double.toString and Float.toString vectors. A consistent-hash key built from a double or float argument
 * is String.valueOf(arg), so a port must print numbers exactly as the JVM that runs the provider's peers.
 */
final class JavaNumberVectors {
    private JavaNumberVectors() {}

    static void writeDoubles(Path path) throws IOException {
        Random rnd = new Random(0x44424c45L);
        Set<Long> bits = new LinkedHashSet<>();
        double[] fixed = {
            0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 0.3, 0.1 + 0.2, 1.0 / 3, 2.0 / 3, 100.0 / 3, 1e7, 1e-3, 9999999.0,
            9999999.999, 9999999.999999998, 1.0E7, 1.0E-4, 0.001, 0.0009999999999999998, 0.00099, 1e6, 1e8,
            123456789.0, 1e10, 1e15, 1e16, 1e17, 1e21, 1e22, 1e23, 2e23, 1e100, 1e300, 1e-5, 1e-7, 1e-10, 1e-300,
            Math.PI, Math.E, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MIN_VALUE,
            Double.MAX_VALUE, Double.MIN_NORMAL, -Double.MIN_VALUE, -Double.MAX_VALUE, 4.9E-324, 1.0E-323,
            2.2250738585072014E-308, 2.225073858507201E-308, 9007199254740992.0, 9007199254740993.0,
            (double) Long.MAX_VALUE, (double) Integer.MAX_VALUE, 2.82879384806159E17, 1.18575755E-316,
            2.0E-3, 5.0E-324, 0.5, 0.25, 0.125, 1.5, 100.0, 1234.5678, -1234.5678, 3.0E10, 6.02214076E23,
            (double) 0.1f, (double) 1.1f, (double) 3.3f, (double) 16777217f, 1.0 / 1024, 1.0 / 3e10,
        };
        for (double d : fixed) {
            bits.add(Double.doubleToRawLongBits(d));
        }
        // "Nice" decimals: small mantissas at many scales, like user-supplied arguments.
        while (bits.size() < 260) {
            long mantissa = rnd.nextInt(4) == 0 ? rnd.nextInt(10) : rnd.nextInt(1_000_000);
            int exp = rnd.nextInt(41) - 20;
            double d = Double.parseDouble(mantissa + "E" + exp);
            bits.add(Double.doubleToRawLongBits(rnd.nextInt(5) == 0 ? -d : d));
        }
        // Random bit patterns (a few are NaN payloads, printed as NaN like every NaN).
        while (bits.size() < 440) {
            bits.add(rnd.nextLong());
        }
        // Values where Java 17's digit count exceeds the shortest round-trip count (JDK-4511638).
        List<Long> longer = new ArrayList<>();
        for (int n = 0; n < 2_000_000 && longer.size() < 60; n++) {
            long b = rnd.nextLong() & 0x7fffffffffffffffL;
            double d = Double.longBitsToDouble(b);
            if (!Double.isFinite(d) || bits.contains(b)) {
                continue;
            }
            if (javaDigits(Double.toString(d)) > shortestDigits(d)) {
                longer.add(b);
            }
        }
        bits.addAll(longer);

        int longerTotal = 0;
        for (long b : bits) {
            double d = Double.longBitsToDouble(b);
            if (Double.isFinite(d) && d != 0 && javaDigits(Double.toString(d)) > shortestDigits(d)) {
                longerTotal++;
            }
        }

        VectorFile file = new VectorFile("java.lang.Double.toString (what String.valueOf(double) prints)");
        file.comment("format: hexbits string");
        file.comment("  hexbits: Double.doubleToRawLongBits as 16 lower-case hex digits; string: Double.toString");
        file.comment("Java 19+ prints the shortest round-trip digits (JDK-4511638 fix); this JDK's algorithm is the");
        file.comment("older FloatingDecimal one, which sometimes prints more digits. On " + longerTotal
                + " of these lines the output has more");
        file.comment("significant digits than the shortest string that reads back to the same double (the last");
        file.comment(longer.size() + " lines were picked at random for that reason). Some are not even the nearest short form:");
        file.comment("1e23 prints 9.999999999999999E22 and 2e23 prints 1.9999999999999998E23 on this JDK.");
        file.comment("Plain notation for 1e-3 <= |d| < 1e7, otherwise d.dddE[-]n; always at least one digit after '.'");
        for (long b : bits) {
            file.line(String.format("%016x", b) + " " + Double.toString(Double.longBitsToDouble(b)));
        }
        file.writeTo(path);
    }

    static void writeFloats(Path path) throws IOException {
        Random rnd = new Random(0x464c4f41L);
        Set<Integer> bits = new LinkedHashSet<>();
        float[] fixed = {
            0.0f, -0.0f, 1.0f, -1.0f, 0.1f, 0.2f, 0.3f, 0.1f + 0.2f, 1.0f / 3, 1e7f, 1e-3f, 9999999.0f, 1.0E-4f,
            0.001f, 1e6f, 1e8f, 1e10f, 1e20f, 1e38f, 1e-10f, 1e-38f, 1e-45f, 16777216f, 16777217f, 3.4028235E38f,
            Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MIN_VALUE, Float.MAX_VALUE,
            Float.MIN_NORMAL, -Float.MIN_VALUE, (float) Math.PI, (float) Math.E, 1.1f, 3.3f, 100.5f, 1234.5678f,
            2.0E-3f, 0.5f, 1.0E-5f, 8.589973E9f, 3.0E10f, (float) Integer.MAX_VALUE,
        };
        for (float f : fixed) {
            bits.add(Float.floatToRawIntBits(f));
        }
        while (bits.size() < 110) {
            int mantissa = rnd.nextInt(4) == 0 ? rnd.nextInt(10) : rnd.nextInt(100_000);
            int exp = rnd.nextInt(31) - 15;
            float f = Float.parseFloat(mantissa + "E" + exp);
            bits.add(Float.floatToRawIntBits(rnd.nextInt(5) == 0 ? -f : f));
        }
        while (bits.size() < 180) {
            bits.add(rnd.nextInt());
        }
        List<Integer> longer = new ArrayList<>();
        for (int n = 0; n < 2_000_000 && longer.size() < 20; n++) {
            int b = rnd.nextInt() & 0x7fffffff;
            float f = Float.intBitsToFloat(b);
            if (!Float.isFinite(f) || bits.contains(b)) {
                continue;
            }
            if (javaDigits(Float.toString(f)) > shortestDigits(f)) {
                longer.add(b);
            }
        }
        bits.addAll(longer);

        VectorFile file = new VectorFile("java.lang.Float.toString (what String.valueOf(float) prints)");
        file.comment("format: hexbits string");
        file.comment("  hexbits: Float.floatToRawIntBits as 8 lower-case hex digits; string: Float.toString");
        file.comment("the last " + longer.size() + " lines are floats where this JDK prints more significant digits than");
        file.comment("the shortest round-trip string (the pre-Java-19 algorithm)");
        for (int b : bits) {
            file.line(String.format("%08x", b) + " " + Float.toString(Float.intBitsToFloat(b)));
        }
        file.writeTo(path);
    }

    /** Significant digits in a Java toString result, ignoring sign, exponent, and padding zeros. */
    static int javaDigits(String s) {
        String m = s.startsWith("-") ? s.substring(1) : s;
        int e = m.indexOf('E');
        if (e >= 0) {
            m = m.substring(0, e);
        }
        String digits = m.replace(".", "").replaceFirst("^0+", "").replaceFirst("0+$", "");
        return Math.max(digits.length(), 1);
    }

    /** Fewest significant decimal digits that parse back to d (nearest-rounding search). */
    static int shortestDigits(double d) {
        BigDecimal exact = new BigDecimal(d);
        for (int p = 1; p <= 17; p++) {
            if (exact.round(new MathContext(p, RoundingMode.HALF_EVEN)).doubleValue() == d) {
                return p;
            }
        }
        return 17;
    }

    static int shortestDigits(float f) {
        BigDecimal exact = new BigDecimal(f);
        for (int p = 1; p <= 9; p++) {
            if (exact.round(new MathContext(p, RoundingMode.HALF_EVEN)).floatValue() == f) {
                return p;
            }
        }
        return 9;
    }
}
