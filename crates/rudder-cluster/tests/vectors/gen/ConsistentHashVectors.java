import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

/** Vectors for ConsistentHashLoadBalance's ketama ring (Dubbo 3.3, no bounded load). */
final class ConsistentHashVectors {
    private ConsistentHashVectors() {}

    static final int DEFAULT_NODES = 160;

    static final String[] FIXTURE = {"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:4", "127.0.0.1:5"};

    /** The ring of one selector: point -> owning address, plus which points a later invoker overwrote. */
    static final class Ring {
        final TreeMap<Long, String> points = new TreeMap<>();
        final Set<Long> overwritten = new HashSet<>();

        Ring(String[] addresses, int nodes) {
            for (String addr : addresses) {
                for (int i = 0; i < nodes / 4; i++) {
                    byte[] digest = md5(addr + i);
                    for (int h = 0; h < 4; h++) {
                        String previous = points.put(point(digest, h), addr);
                        if (previous != null && !previous.equals(addr)) {
                            overwritten.add(point(digest, h));
                        }
                    }
                }
            }
        }

        Map.Entry<Long, String> entryFor(String key) {
            Map.Entry<Long, String> e = points.ceilingEntry(requestHash(key));
            return e != null ? e : points.firstEntry();
        }
    }

    /** Bytes.getMD5(String) encodes with the platform charset; UTF-8 is what modern JVMs use. */
    static byte[] md5(String s) {
        try {
            return MessageDigest.getInstance("MD5").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Little-endian u32 from digest bytes [4h, 4h+4), as a non-negative long. */
    static long point(byte[] d, int h) {
        return (((long) (d[3 + h * 4] & 0xFF) << 24)
                        | ((long) (d[2 + h * 4] & 0xFF) << 16)
                        | ((long) (d[1 + h * 4] & 0xFF) << 8)
                        | (d[h * 4] & 0xFF))
                & 0xFFFFFFFFL;
    }

    static long requestHash(String key) {
        return point(md5(key), 0);
    }

    static void write(Path chPath, Path pointsPath) throws IOException {
        Random rnd = new Random(0x4b45544dL);
        VectorFile file = new VectorFile("ConsistentHashLoadBalance ring lookups, Dubbo 3.3");
        file.comment("format: providers=a1,a2,... nodes=N keyhex=HEX hash=H owner=ADDR");
        file.comment("  providers: invoker addresses (url.getAddress(), host:port) in list order");
        file.comment("  nodes: hash.nodes; the ring has nodes/4 (integer division) MD5 digests per invoker");
        file.comment("  keyhex: the request key (the concatenated String.valueOf of the hash.arguments) as UTF-8");
        file.comment("    bytes in lower-case hex; empty key = 'keyhex=' with nothing after '='");
        file.comment("  hash: u32 decimal, little-endian u32 of MD5(key) bytes 0..4");
        file.comment("  owner: address of the first ring point >= hash (unsigned order), wrapping to the smallest");
        file.comment("ring: for each invoker in list order, for i in 0..nodes/4, d = MD5(UTF-8(addr + decimal i)),");
        file.comment("  points = LE u32 of d[0..4], d[4..8], d[8..12], d[12..16] inserted in that order; a later");
        file.comment("  insert of an existing point replaces its owner (TreeMap.put)");
        file.comment("sections: 5-invoker fixture 127.0.0.1:1..5 (arg1, arg0..arg999, empty, null, arg1arg2);");
        file.comment("  127.0.0.1:3 removed (arg0..arg999); reordered fixture; address-collision lists (keys chosen so");
        file.comment("  that about half land on an overwritten point); nodes 4/8/161/320; realistic addresses with");
        file.comment("  random keys including non-ASCII text");

        List<String> fixtureKeys = new ArrayList<>();
        fixtureKeys.add("arg1");
        for (int i = 0; i < 1000; i++) {
            fixtureKeys.add("arg" + i);
        }
        fixtureKeys.add("");
        fixtureKeys.add("null");
        fixtureKeys.add("arg1arg2");
        emit(file, FIXTURE, DEFAULT_NODES, fixtureKeys);

        String[] removed = {"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:4", "127.0.0.1:5"};
        emit(file, removed, DEFAULT_NODES, fixtureKeys.subList(1, 1001));

        String[] reversed = {"127.0.0.1:5", "127.0.0.1:4", "127.0.0.1:3", "127.0.0.1:2", "127.0.0.1:1"};
        emit(file, reversed, DEFAULT_NODES, fixtureKeys.subList(1, 101));

        String[][] collisionLists = {
            {"127.0.0.1:1", "127.0.0.1:11"},
            {"127.0.0.1:11", "127.0.0.1:1"},
            {"127.0.0.1:1", "127.0.0.1:11", "127.0.0.1:111"},
            {"127.0.0.1:111", "127.0.0.1:11", "127.0.0.1:1"},
            {"10.0.0.1:2088", "10.0.0.1:20881"},
            {"10.0.0.1:20881", "10.0.0.1:2088"},
        };
        for (String[] list : collisionLists) {
            emit(file, list, DEFAULT_NODES, collisionKeys(new Ring(list, DEFAULT_NODES), 20, 20));
        }
        String[] wide = {"127.0.0.1:1", "127.0.0.1:11"};
        emit(file, wide, 320, collisionKeys(new Ring(wide, 320), 20, 10));

        for (int nodes : new int[] {4, 8, 161, 320}) {
            emit(file, FIXTURE, nodes, fixtureKeys.subList(1, 201));
        }

        String[] realistic = {
            "10.0.0.12:20880", "10.0.0.13:20880", "10.0.1.7:20881", "192.168.31.200:20880",
            "172.17.0.3:20880", "provider-a.default.svc.cluster.local:20880",
        };
        List<String> randomKeys = randomKeys(rnd, 50);
        emit(file, realistic, DEFAULT_NODES, randomKeys);
        String[] realisticShort = {"10.0.0.12:20880", "10.0.0.13:20880", "10.0.1.7:20881"};
        emit(file, realisticShort, DEFAULT_NODES, randomKeys);
        file.writeTo(chPath);

        VectorFile pts = new VectorFile("First ring points per invoker of the 5-invoker fixture, hash.nodes=160");
        pts.comment("format: addr nodes p1 p2 ... p10");
        pts.comment("  the first 10 points in insertion order (i=0: d[0..4], d[4..8], d[8..12], d[12..16]; i=1: ...;");
        pts.comment("  i=2: first two) before any overwrite, each a u32 in decimal");
        for (String addr : FIXTURE) {
            StringBuilder sb = new StringBuilder(addr).append(' ').append(DEFAULT_NODES);
            int written = 0;
            for (int i = 0; written < 10; i++) {
                byte[] d = md5(addr + i);
                for (int h = 0; h < 4 && written < 10; h++, written++) {
                    sb.append(' ').append(point(d, h));
                }
            }
            pts.line(sb.toString());
        }
        pts.writeTo(pointsPath);
    }

    private static void emit(VectorFile file, String[] providers, int nodes, List<String> keys) {
        Ring ring = new Ring(providers, nodes);
        String prefix = "providers=" + String.join(",", providers) + " nodes=" + nodes;
        for (String key : keys) {
            file.line(prefix + " keyhex=" + VectorFile.utf8Hex(key) + " hash=" + requestHash(key)
                    + " owner=" + ring.entryFor(key).getValue());
        }
    }

    /** Keys "k<n>": the first `hits` that land on an overwritten point, then `misses` that do not. */
    private static List<String> collisionKeys(Ring ring, int hits, int misses) {
        List<String> onCollision = new ArrayList<>();
        List<String> elsewhere = new ArrayList<>();
        for (int n = 0; n < 1_000_000 && (onCollision.size() < hits || elsewhere.size() < misses); n++) {
            String key = "k" + n;
            boolean hit = ring.overwritten.contains(ring.entryFor(key).getKey());
            if (hit && onCollision.size() < hits) {
                onCollision.add(key);
            } else if (!hit && elsewhere.size() < misses) {
                elsewhere.add(key);
            }
        }
        if (!ring.overwritten.isEmpty() && onCollision.isEmpty()) {
            throw new IllegalStateException("no key found on a collided point");
        }
        onCollision.addAll(elsewhere);
        return onCollision;
    }

    private static final String[] WORDS = {
        "user", "order", "42", "alice@example.com", "订单", "用户名", "Größe", "café", "naïve", "Ελληνικά",
        "русский", "日本語テキスト", "한국어", "😀", "🚀x", "a b", "  ", "tab\there", "line\nbreak", "null",
        "1.0E10", "-0.0", "true", "[I@1b6d3586", "%20", "+", "=&?", "\\", "\"quoted\"", "ß",
    };

    private static List<String> randomKeys(Random rnd, int count) {
        List<String> keys = new ArrayList<>();
        for (int n = 0; n < count; n++) {
            StringBuilder sb = new StringBuilder();
            int parts = 1 + rnd.nextInt(3);
            for (int p = 0; p < parts; p++) {
                if (rnd.nextInt(3) == 0) {
                    sb.append(rnd.nextInt(1_000_000));
                } else {
                    sb.append(WORDS[rnd.nextInt(WORDS.length)]);
                }
            }
            keys.add(sb.toString());
        }
        return keys;
    }
}
