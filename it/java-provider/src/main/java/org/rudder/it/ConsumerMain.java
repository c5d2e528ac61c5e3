package org.rudder.it;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;

/**
 * A Java Dubbo 3.3 consumer of GreetingService: a smoke check of the providers,
 * a source of real request bytes, and the "Java consumer" side of benchmarks.
 *
 * <p>Settings (system property, or the environment variable in brackets):
 * <ul>
 *   <li>{@code rudder.url} [RUDDER_URL]: call this provider directly, e.g. dubbo://127.0.0.1:20880;
 *       otherwise discover providers through {@code rudder.zk.address} [RUDDER_ZK_ADDRESS]</li>
 *   <li>{@code rudder.version} [RUDDER_VERSION], {@code rudder.group} [RUDDER_GROUP]: what to ask for</li>
 *   <li>{@code rudder.mode} [RUDDER_MODE]: {@code call} (default) calls every method once and prints
 *       one line per result; {@code bench} calls sayHello many times</li>
 *   <li>{@code rudder.calls} [RUDDER_CALLS] (default 100000), {@code rudder.threads} [RUDDER_THREADS]
 *       (default 4), {@code rudder.bench.warmup} [RUDDER_BENCH_WARMUP] (default 2000): bench mode only</li>
 *   <li>{@code rudder.timeout} [RUDDER_TIMEOUT]: per-call timeout in ms, default 3000</li>
 * </ul>
 * Bench mode prints one line:
 * {@code BENCH calls=N threads=C errors=E seconds=S qps=Q p50_us=X p99_us=Y}.
 */
public final class ConsumerMain {

    private ConsumerMain() {
    }

    public static void main(String[] args) throws Exception {
        LoopbackHost.pin();
        String directUrl = Settings.get("rudder.url", null);
        String zk = Settings.get("rudder.zk.address", "127.0.0.1:2181");
        String version = Settings.get("rudder.version", null);
        String group = Settings.get("rudder.group", null);
        String mode = Settings.get("rudder.mode", "call");
        int timeout = Settings.getInt("rudder.timeout", 3000);

        ApplicationConfig application = new ApplicationConfig("rudder-it-java-consumer");
        application.setQosEnable(false);
        application.setRegisterMode("interface");

        ReferenceConfig<GreetingService> reference = new ReferenceConfig<>();
        reference.setInterface(GreetingService.class);
        reference.setTimeout(timeout);
        reference.setRetries(0);
        if (version != null) {
            reference.setVersion(version);
        }
        if (group != null) {
            reference.setGroup(group);
        }
        // Java 3.2+ consumers otherwise pick the provider's first prefer.serialization (fastjson2);
        // rudder speaks hessian2, so the benchmark baseline must too.
        Map<String, String> params = new HashMap<>();
        params.put("serialization", "hessian2");
        params.put("prefer.serialization", "hessian2");
        reference.setParameters(params);

        DubboBootstrap bootstrap = DubboBootstrap.getInstance().application(application);
        if (directUrl != null) {
            reference.setUrl(directUrl);
        } else {
            bootstrap.registry(new RegistryConfig("zookeeper://" + zk));
        }
        bootstrap.reference(reference).start();
        GreetingService greeting = reference.get();

        int status;
        if ("bench".equals(mode)) {
            status = bench(greeting);
        } else {
            status = callEachMethod(greeting);
        }
        bootstrap.stop();
        System.exit(status);
    }

    private static int callEachMethod(GreetingService greeting) {
        int failures = 0;
        failures += report("sayHello", () -> greeting.sayHello("rudder"));
        failures += report("add", () -> greeting.add(2, 40));
        // A zero result is falsy in JS: sofa-rpc-node then drops the response flag.
        failures += report("add(0,0)", () -> greeting.add(0, 0));
        failures += report("echoUser", () -> greeting.echoUser(new User("alice", 30, List.of("a", "b"))));
        failures += report("nullValue", greeting::nullValue);
        try {
            greeting.fail("boom");
            System.out.println("fail: no exception (unexpected)");
            failures++;
        } catch (GreetingException e) {
            System.out.println("fail: GreetingException " + e.getMessage());
        } catch (RuntimeException e) {
            System.out.println("fail: other exception " + e.getClass().getName() + ": " + firstLine(e));
            failures++;
        }
        failures += report("slow", () -> greeting.slow(50));
        return failures == 0 ? 0 : 1;
    }

    private static int report(String what, Supplier<Object> call) {
        try {
            System.out.println(what + ": " + call.get());
            return 0;
        } catch (RuntimeException e) {
            System.out.println(what + ": ERROR " + e.getClass().getName() + ": " + firstLine(e));
            return 1;
        }
    }

    private static String firstLine(Throwable e) {
        String message = String.valueOf(e.getMessage());
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    private static int bench(GreetingService greeting) throws InterruptedException {
        int calls = Settings.getInt("rudder.calls", 100_000);
        int threads = Math.max(1, Settings.getInt("rudder.threads", 4));
        int warmup = Settings.getInt("rudder.bench.warmup", 2000);

        for (int i = 0; i < warmup; i++) {
            greeting.sayHello("warmup");
        }

        long[] latenciesNanos = new long[calls];
        AtomicLong next = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        Thread[] workers = new Thread[threads];
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            workers[t] = new Thread(() -> {
                long index;
                while ((index = next.getAndIncrement()) < calls) {
                    long before = System.nanoTime();
                    try {
                        greeting.sayHello("bench");
                    } catch (RuntimeException e) {
                        errors.incrementAndGet();
                    }
                    latenciesNanos[(int) index] = System.nanoTime() - before;
                }
            }, "bench-" + t);
            workers[t].start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        Arrays.sort(latenciesNanos);
        System.out.printf(
                "BENCH calls=%d threads=%d errors=%d seconds=%.3f qps=%.0f p50_us=%.1f p99_us=%.1f%n",
                calls, threads, errors.get(), seconds, calls / seconds,
                percentile(latenciesNanos, 0.50) / 1e3, percentile(latenciesNanos, 0.99) / 1e3);
        return errors.get() == 0 ? 0 : 1;
    }

    private static long percentile(long[] sorted, double fraction) {
        if (sorted.length == 0) {
            return 0;
        }
        int index = (int) Math.ceil(fraction * sorted.length) - 1;
        return sorted[Math.min(sorted.length - 1, Math.max(0, index))];
    }
}
