import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/** Vectors for AbstractLoadBalance.calculateWarmupWeight and getWeight (Dubbo 3.x, linear warmup). */
final class WarmupVectors {
    private WarmupVectors() {}

    static final int DEFAULT_WEIGHT = 100;
    static final int DEFAULT_WARMUP = 600000;

    /** Dubbo 3.x: f32 divisor, f32 quotient, saturating truncation, clamp to [1, weight]. */
    static int warmupWeight(int uptime, int warmup, int weight) {
        int ww = (int) ((float) uptime / ((float) warmup / (float) weight));
        return ww < 1 ? 1 : Math.min(ww, weight);
    }

    /** The same formula in f64: what a port gets wrong if it widens. Used only to find divergent inputs. */
    static int warmupWeightF64(int uptime, int warmup, int weight) {
        int ww = (int) ((double) uptime / ((double) warmup / (double) weight));
        return ww < 1 ? 1 : Math.min(ww, weight);
    }

    /**
     * getWeight for a plain (non-registry) invoker, with the URL parameters given as strings (null means
     * the parameter is absent). Mirrors the control flow of AbstractLoadBalance.getWeight in 3.3.
     */
    static int getWeight(String weightParam, String warmupParam, String timestampParam, long now) {
        int weight = weightParam == null ? DEFAULT_WEIGHT : Integer.parseInt(weightParam);
        if (weight > 0) {
            long timestamp = timestampParam == null ? 0L : Long.parseLong(timestampParam);
            if (timestamp > 0L) {
                long uptime = now - timestamp;
                if (uptime < 0) {
                    return 1;
                }
                int warmup = warmupParam == null ? DEFAULT_WARMUP : Integer.parseInt(warmupParam);
                if (uptime > 0 && uptime < warmup) {
                    weight = warmupWeight((int) uptime, warmup, weight);
                }
            }
        }
        return Math.max(weight, 0);
    }

    private static final long[] TABLE_UPTIMES = {
        0, 13, 6000, 12000, 60000, 300000, 300023, 305999, 306000, 540000, 588000, 594000, 600000, 1200000
    };

    static void writeWarmup(Path path) throws IOException {
        Random rnd = new Random(0x5741524dL);
        List<String> table = new ArrayList<>();
        for (long up : TABLE_UPTIMES) {
            table.add(row((int) up, DEFAULT_WARMUP, DEFAULT_WEIGHT));
        }

        Set<String> random = new LinkedHashSet<>();
        // Hand-picked extremes first, then ~2000 random draws across warmup/weight magnitudes.
        int max = Integer.MAX_VALUE;
        int[][] fixed = {
            {1, 2, 1}, {1, 2, 100}, {1, max, 1}, {max - 1, max, 1}, {max - 1, max, 100},
            {max - 1, max, max}, {1, max, max}, {1 << 24, max, 10000}, {(1 << 24) + 1, max, 10000},
            {599999, 600000, 100}, {1, 600000, 10000}, {1, 600000, max}, {599999, 600000, max},
            {5, 10, 3}, {7, 10, 3}, {1, 3, 7}, {2, 3, 7}, {123456789, 987654321, 777}, {300000, 600000, 14},
        };
        for (int[] f : fixed) {
            random.add(row(f[0], f[1], f[2]));
        }
        while (random.size() < 2000) {
            int warmup = randomWarmup(rnd);
            int weight = randomWeight(rnd);
            int uptime = rnd.nextInt(10) == 0 ? warmup - 1 : 1 + rnd.nextInt(warmup - 1);
            random.add(row(uptime, warmup, weight));
        }

        Set<String> divergent = findF64Divergent(new Random(0x46363444L), 100, 50);
        random.removeAll(divergent);

        VectorFile file = new VectorFile("calculateWarmupWeight(uptime, warmup, weight), Dubbo 3.x linear curve");
        file.comment("format: uptime warmup weight expected   (all decimal i32)");
        file.comment("expected = clamp((int)((float)uptime / ((float)warmup / (float)weight)), 1, weight)");
        file.comment("  i.e. IEEE f32 division twice, cast truncates toward zero and saturates; then ww<1 -> 1, else min(ww, weight)");
        file.comment("data lines (comments not counted) 1.." + table.size() + ": the LoadBalanceBaseTest table (warmup 600000, weight 100;"
                + " includes uptime 0 and >= warmup, which getWeight never passes in)");
        file.comment("next " + random.size() + " lines: fixed extremes and random inputs, uptime in [1, warmup)");
        file.comment("last " + divergent.size() + " lines: inputs where the same formula in f64 gives a different answer,");
        file.comment("  found by a targeted search near integer quotients (first 100: common warmups with weights");
        file.comment("  <= 2000, e.g. 300000 600000 14 -> 6 where f64 gives 7; then 50 over the full range). Such");
        file.comment("  inputs are common: an exhaustive scan of 17 common warmups x weights 1..2000 near every");
        file.comment("  integer quotient found about 493000 of them");
        for (String s : table) {
            file.line(s);
        }
        for (String s : random) {
            file.line(s);
        }
        for (String s : divergent) {
            file.line(s);
        }
        file.writeTo(path);
    }

    private static String row(int uptime, int warmup, int weight) {
        return uptime + " " + warmup + " " + weight + " " + warmupWeight(uptime, warmup, weight);
    }

    private static int randomWarmup(Random rnd) {
        switch (rnd.nextInt(6)) {
            case 0:
                return 2 + rnd.nextInt(99);
            case 1:
                return 100 + rnd.nextInt(100_000);
            case 2:
                return DEFAULT_WARMUP;
            case 3:
                return 100_000 + rnd.nextInt(10_000_000);
            case 4:
                return 10_000_000 + rnd.nextInt(Integer.MAX_VALUE - 10_000_000);
            default:
                return rnd.nextInt(20) == 0 ? Integer.MAX_VALUE : Integer.MAX_VALUE - rnd.nextInt(1000);
        }
    }

    private static int randomWeight(Random rnd) {
        int pick = rnd.nextInt(20);
        if (pick == 0) {
            return 10_000 + rnd.nextInt(Integer.MAX_VALUE - 10_000);
        }
        if (pick == 1) {
            return Integer.MAX_VALUE - rnd.nextInt(3);
        }
        if (pick < 5) {
            return DEFAULT_WEIGHT;
        }
        return 1 + rnd.nextInt(10_000);
    }

    /** Warmup periods people actually configure (ms), used to aim the f32/f64 divergence search. */
    private static final int[] COMMON_WARMUPS = {
        600000, 60000, 120000, 180000, 300000, 900000, 1200000, 1800000, 3600000, 10000, 30000, 90000,
    };

    /**
     * Finds inputs where f32 and f64 disagree. They only can near an integer boundary of the quotient, so
     * aim uptime at k * warmup / weight for a random k and probe its neighbours. The first `realistic`
     * come from common warmups and weights up to 2000, the rest from the full input range.
     */
    private static Set<String> findF64Divergent(Random rnd, int realistic, int broad) {
        Set<String> found = new LinkedHashSet<>();
        for (int attempt = 0; attempt < 5_000_000 && found.size() < realistic + broad; attempt++) {
            boolean common = found.size() < realistic;
            int warmup = common ? COMMON_WARMUPS[rnd.nextInt(COMMON_WARMUPS.length)] : randomWarmup(rnd);
            int weight = common ? 1 + rnd.nextInt(2000) : randomWeight(rnd);
            long k = 1 + (long) (rnd.nextDouble() * Math.min(weight, warmup));
            long centre = k * (long) warmup / weight;
            for (long up = centre - 1; up <= centre + 1 && found.size() < realistic + broad; up++) {
                if (up < 1 || up >= warmup) {
                    continue;
                }
                int u = (int) up;
                if (warmupWeight(u, warmup, weight) != warmupWeightF64(u, warmup, weight)) {
                    found.add(row(u, warmup, weight));
                }
            }
        }
        return found;
    }

    static void writeGetWeight(Path path) throws IOException {
        Random rnd = new Random(0x47455457L);
        long now = 1_732_900_000_000L;
        List<String[]> cases = new ArrayList<>();
        String max = String.valueOf(Integer.MAX_VALUE);

        // Defaults and absent parameters.
        cases.add(new String[] {null, null, null, str(now)});
        cases.add(new String[] {"200", null, null, str(now)});
        cases.add(new String[] {null, "1000", null, str(now)});
        // weight <= 0: returned as max(weight, 0) and no warmup, even with a fresh or future timestamp.
        for (String w : new String[] {"0", "-1", "-100", String.valueOf(Integer.MIN_VALUE)}) {
            cases.add(new String[] {w, null, null, str(now)});
            cases.add(new String[] {w, null, str(now - 10), str(now)});
            cases.add(new String[] {w, "1000", str(now + 5000), str(now)});
        }
        // timestamp <= 0 means no warmup.
        for (String ts : new String[] {"0", "-1", "-1732900000000", String.valueOf(Long.MIN_VALUE)}) {
            cases.add(new String[] {null, null, ts, str(now)});
            cases.add(new String[] {"50", "1000", ts, str(now)});
        }
        // Provider clock ahead of ours: uptime < 0 gives 1 regardless of weight and warmup.
        for (long ahead : new long[] {1, 2, 1000, 600000, 1L << 33}) {
            cases.add(new String[] {null, null, str(now + ahead), str(now)});
            cases.add(new String[] {"7", "0", str(now + ahead), str(now)});
        }
        // uptime == 0 gives the full weight (range check is uptime > 0).
        cases.add(new String[] {null, null, str(now), str(now)});
        cases.add(new String[] {"9", "100", str(now), str(now)});
        // Window edges.
        for (long up : new long[] {1, 599999, 600000, 600001}) {
            cases.add(new String[] {null, null, str(now - up), str(now)});
        }
        cases.add(new String[] {"1000", "10", str(now - 9), str(now)});
        cases.add(new String[] {"1000", "10", str(now - 10), str(now)});
        // warmup <= 0 disables warmup.
        for (String wu : new String[] {"0", "-1", String.valueOf(Integer.MIN_VALUE)}) {
            cases.add(new String[] {"100", wu, str(now - 1), str(now)});
        }
        // The LoadBalanceBaseTest table through getWeight.
        for (long up : TABLE_UPTIMES) {
            cases.add(new String[] {null, null, str(now - up), str(now)});
        }
        // Long uptimes: AbstractLoadBalanceTest's now - Integer.MAX_VALUE - 1, and beyond 2^32.
        long[] longUps = {(1L << 31) - 2, (1L << 31) - 1, 1L << 31, (1L << 31) + 1, (1L << 32) + 5, 1L << 40};
        for (long up : longUps) {
            cases.add(new String[] {null, null, str(now - up), str(now)});
            cases.add(new String[] {"100", max, str(now - up), str(now)});
            cases.add(new String[] {max, max, str(now - up), str(now)});
        }
        cases.add(new String[] {null, null, "1", str(now)});
        cases.add(new String[] {max, null, str(now - 1), str(now)});

        while (cases.size() < 500) {
            long n = now + rnd.nextInt(1_000_000_000);
            String w = pickWeightParam(rnd);
            String wu = pickWarmupParam(rnd);
            int warmup = wu == null ? DEFAULT_WARMUP : Integer.parseInt(wu);
            long up;
            switch (rnd.nextInt(8)) {
                case 0:
                    up = -1 - rnd.nextInt(100_000);
                    break;
                case 1:
                    up = rnd.nextInt(3);
                    break;
                case 2:
                    up = Math.max(warmup, 0) + (long) rnd.nextInt(1000);
                    break;
                case 3:
                    up = (1L << 31) + rnd.nextInt(1 << 30);
                    break;
                default:
                    up = warmup > 1 ? 1 + (long) (rnd.nextDouble() * (warmup - 1)) : rnd.nextInt(1000);
            }
            String ts;
            int tsKind = rnd.nextInt(12);
            if (tsKind == 0) {
                ts = null;
            } else if (tsKind == 1) {
                ts = rnd.nextBoolean() ? "0" : str(-1 - rnd.nextInt(1000));
            } else {
                ts = str(n - up);
            }
            cases.add(new String[] {w, wu, ts, str(n)});
        }

        VectorFile file = new VectorFile("AbstractLoadBalance.getWeight for a plain invoker, Dubbo 3.3");
        file.comment("format: weight_param warmup_param timestamp now expected");
        file.comment("  weight_param/warmup_param: decimal i32 URL parameter values, '-' = parameter absent");
        file.comment("  timestamp: decimal i64 'timestamp' URL parameter, '-' = absent; now: i64 current millis");
        file.comment("  expected: i32 getWeight result");
        file.comment("rules: weight default 100; weight <= 0 -> max(weight, 0) with no warmup; timestamp absent or");
        file.comment("  <= 0 -> no warmup; uptime = now - timestamp (i64); uptime < 0 -> 1; warmup default 600000;");
        file.comment("  only 0 < uptime < warmup applies calculateWarmupWeight((int)uptime, warmup, weight)");
        for (String[] c : cases) {
            int expected = getWeight(c[0], c[1], c[2], Long.parseLong(c[3]));
            file.line(dash(c[0]) + " " + dash(c[1]) + " " + dash(c[2]) + " " + c[3] + " " + expected);
        }
        file.writeTo(path);
    }

    private static String pickWeightParam(Random rnd) {
        int k = rnd.nextInt(20);
        if (k < 3) {
            return null;
        }
        if (k == 3) {
            return String.valueOf(-rnd.nextInt(1000));
        }
        if (k == 4) {
            return String.valueOf(10_000 + rnd.nextInt(Integer.MAX_VALUE - 10_000));
        }
        return String.valueOf(1 + rnd.nextInt(1000));
    }

    private static String pickWarmupParam(Random rnd) {
        int k = rnd.nextInt(20);
        if (k < 5) {
            return null;
        }
        if (k == 5) {
            return String.valueOf(-rnd.nextInt(1000));
        }
        if (k == 6) {
            return String.valueOf(Integer.MAX_VALUE - rnd.nextInt(1000));
        }
        if (k < 10) {
            return String.valueOf(2 + rnd.nextInt(1000));
        }
        return String.valueOf(1000 + rnd.nextInt(10_000_000));
    }

    private static String str(long v) {
        return Long.toString(v);
    }

    private static String dash(String s) {
        return s == null ? "-" : s;
    }
}
