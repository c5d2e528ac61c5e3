import java.io.IOException;
import java.nio.file.Path;
import java.util.Random;

/** Vectors for RoundRobinLoadBalance (smooth weighted round robin), single thread, Dubbo 3.3. */
final class RoundRobinVectors {
    private RoundRobinVectors() {}

    static final int FRESH_PICKS = 200;
    static final int PICKS_BEFORE_CHANGE = 50;
    static final int PICKS_AFTER_CHANGE = 100;

    /**
     * Per-invoker state as in RoundRobinLoadBalance.WeightedRoundRobin for one service method. Invokers
     * are identified by position, i.e. the same list of invokers on every call.
     */
    static final class Swrr {
        private final int[] weight;
        private final long[] current;

        Swrr(int size) {
            weight = new int[size];
            current = new long[size];
        }

        /** One doSelect with the given (already warmup-adjusted) weights; returns the chosen index. */
        int pick(int[] weights, boolean fresh) {
            int total = 0;
            long maxCurrent = Long.MIN_VALUE;
            int selected = -1;
            for (int i = 0; i < weights.length; i++) {
                int w = weights[i];
                // A new entry is created with current 0; an existing one is reset to 0 when its weight changed.
                if (fresh || w != weight[i]) {
                    weight[i] = w;
                    current[i] = 0;
                }
                current[i] += w;
                long cur = current[i];
                if (cur > maxCurrent) {
                    maxCurrent = cur;
                    selected = i;
                }
                total += w;
            }
            current[selected] -= total;
            return selected;
        }
    }

    static int[] picks(Swrr state, int[] weights, int count, boolean fresh) {
        int[] out = new int[count];
        for (int i = 0; i < count; i++) {
            out[i] = state.pick(weights, fresh && i == 0);
        }
        return out;
    }

    static void write(Path path) throws IOException {
        Random rnd = new Random(0x52524c42L);
        VectorFile file = new VectorFile("RoundRobinLoadBalance (smooth weighted RR), single thread, Dubbo 3.3");
        file.comment("two kinds of lines, told apart by the presence of a then= field:");
        file.comment("  weights=w1,w2,... picks=i,i,...");
        file.comment("    the first " + FRESH_PICKS + " picks (0-based invoker indexes) from fresh state");
        file.comment("  weights=w1,w2,... then=v1,v2,... picks=i,i,...");
        file.comment("    fresh state, " + PICKS_BEFORE_CHANGE + " picks with weights (not listed), then the same invokers");
        file.comment("    report weights then=..., and the next " + PICKS_AFTER_CHANGE + " picks are listed; an invoker");
        file.comment("    whose weight changed has its current reset to 0, unchanged ones keep theirs");
        file.comment("weights are the per-invoker getWeight results (non-negative i32); selection uses strict '>'");
        file.comment("so ties go to the earlier invoker; current values are i64, total is the i32 sum");

        int[][] fixed = {
            {1, 2, 3}, {5, 1, 1}, {1, 1, 1, 1, 1}, {100, 100}, {7, 7, 7}, {0, 0, 0}, {0, 0}, {0, 5, 0},
            {3, 0, 1}, {0, 1}, {1, 0}, {1, 9, 6}, {1, 9, 6, 11}, {1, 9, 15}, {2, 1}, {1, 1000},
            {1_000_000, 1, 1}, {Integer.MAX_VALUE / 4, Integer.MAX_VALUE / 4, 1},
        };
        for (int[] w : fixed) {
            file.line(freshLine(w));
        }
        for (int n = 0; n < 60; n++) {
            file.line(freshLine(randomWeights(rnd, 2 + rnd.nextInt(11), n % 10 == 9)));
        }

        int[][][] changes = {
            {{1, 2, 3}, {1, 2, 3}}, // no change: nothing resets
            {{1, 2, 3}, {3, 2, 1}}, // middle unchanged keeps its current
            {{5, 1, 1}, {5, 1, 2}},
            {{10, 10, 10}, {0, 10, 10}}, // drop to zero
            {{0, 10, 10}, {10, 10, 10}}, // come back from zero
            {{1, 1, 1, 1}, {2, 2, 2, 2}}, // all change: full reset
            {{60, 100, 100}, {61, 100, 100}}, // warmup-style creep of one invoker
            {{100, 100, 1}, {100, 100, 2}},
            {{0, 0, 0}, {1, 2, 3}},
            {{1, 9, 6}, {1, 9, 0}},
        };
        for (int[][] c : changes) {
            file.line(changeLine(c[0], c[1]));
        }
        for (int n = 0; n < 30; n++) {
            int size = 2 + rnd.nextInt(11);
            int[] before = randomWeights(rnd, size, false);
            int[] after = before.clone();
            int mode = n % 3;
            for (int i = 0; i < size; i++) {
                boolean change = mode == 0 ? rnd.nextInt(4) == 0 : mode == 1 || rnd.nextBoolean();
                if (change) {
                    after[i] = rnd.nextInt(5) == 0 ? 0 : 1 + rnd.nextInt(1000);
                }
            }
            file.line(changeLine(before, after));
        }
        file.writeTo(path);
    }

    private static int[] randomWeights(Random rnd, int size, boolean large) {
        int[] w = new int[size];
        for (int i = 0; i < size; i++) {
            int k = rnd.nextInt(10);
            if (k == 0) {
                w[i] = 0;
            } else if (large && k < 4) {
                w[i] = 1_000_000 + rnd.nextInt(1_000_000);
            } else {
                w[i] = 1 + rnd.nextInt(1000);
            }
        }
        return w;
    }

    private static String freshLine(int[] weights) {
        int[] p = picks(new Swrr(weights.length), weights, FRESH_PICKS, true);
        return "weights=" + VectorFile.joinInts(weights) + " picks=" + VectorFile.joinInts(p);
    }

    private static String changeLine(int[] before, int[] after) {
        Swrr state = new Swrr(before.length);
        picks(state, before, PICKS_BEFORE_CHANGE, true);
        int[] p = picks(state, after, PICKS_AFTER_CHANGE, false);
        return "weights=" + VectorFile.joinInts(before) + " then=" + VectorFile.joinInts(after)
                + " picks=" + VectorFile.joinInts(p);
    }
}
