import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Random;
import java.util.Set;

/** java.net.URLEncoder.encode(s, UTF-8) vectors: Dubbo's URL.encode for ZooKeeper node names. */
final class UrlEncodeVectors {
    private UrlEncodeVectors() {}

    static void write(Path path) throws IOException {
        Random rnd = new Random(0x55524c45L);
        Set<String> inputs = new LinkedHashSet<>();
        for (char c = 0x20; c < 0x7f; c++) {
            inputs.add(String.valueOf(c));
        }
        StringBuilder printable = new StringBuilder();
        for (char c = 0x20; c < 0x7f; c++) {
            printable.append(c);
        }
        inputs.add(printable.toString());
        String[] fixed = {
            " ", "   ", "a b", " leading", "trailing ", "*-._~", "~", "a+b", "100%", "a=b&c=d", "x?y#z",
            "\t", "\n", "\r\n", "\u0000", "\u007f", "\u0080", "é", "café", "Größe", "ß", "中文", "订单服务",
            "日本語", "한국어", "Ελληνικά", "русский", "😀", "🚀 launch", "\u00a0", "\ufeff", "\uffff",
            "\u0800", "\u07ff", "\ud800\udc00", "\udbff\udfff", "AZaz09", "com.example.DemoService",
            "sayHello,sayHelloAsync", "127.0.0.1:20880", "[::1]:20880", "/dubbo/com.foo.Bar/providers",
            "dubbo://192.168.1.9:20880/org.apache.dubbo.demo.DemoService?anyhost=true&application=demo-provider"
                    + "&deprecated=false&dubbo=2.0.2&dynamic=true&generic=false"
                    + "&interface=org.apache.dubbo.demo.DemoService&methods=sayHello,sayHelloAsync&pid=1234"
                    + "&release=3.3.1&service-name-mapping=true&side=provider&timestamp=1714144945493&weight=200",
            "tri://10.0.0.12:50051/com.example.Greeter?application=greeter&group=blue&version=1.0.0"
                    + "&methods=greet&timeout=3000&warmup=120000&tag=gray&name=名字",
            "override://0.0.0.0/com.example.Greeter?category=configurators&dynamic=false&enabled=true"
                    + "&weight=50",
        };
        for (String s : fixed) {
            inputs.add(s);
        }
        // Random strings over a pool mixing safe, reserved, and multi-byte characters.
        String pool = "abcXYZ019 *-._~!\"#$%&'()+,/:;<=>?@[\\]^`{|}éß中😀\t";
        int[] codePoints = pool.codePoints().toArray();
        while (inputs.size() < 220) {
            StringBuilder sb = new StringBuilder();
            int len = 1 + rnd.nextInt(20);
            for (int i = 0; i < len; i++) {
                sb.appendCodePoint(codePoints[rnd.nextInt(codePoints.length)]);
            }
            inputs.add(sb.toString());
        }

        VectorFile file = new VectorFile("java.net.URLEncoder.encode(s, UTF-8), used by Dubbo URL.encode");
        file.comment("format: inputhex output");
        file.comment("  inputhex: the input string as UTF-8 bytes in lower-case hex (never empty here; Dubbo's");
        file.comment("  URL.encode maps null/empty to the empty string); output: the encoded string (no spaces:");
        file.comment("  space encodes as '+'); kept as-is: A-Z a-z 0-9 . - * _ ; everything else %XX upper-case");
        file.comment("inputs are valid Unicode only (no lone surrogates, which Java would encode as '?' = %3F)");
        for (String s : inputs) {
            file.line(VectorFile.utf8Hex(s) + " " + URLEncoder.encode(s, StandardCharsets.UTF_8));
        }
        file.writeTo(path);
    }
}
