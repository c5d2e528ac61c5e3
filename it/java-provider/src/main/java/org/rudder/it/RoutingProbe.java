package org.rudder.it;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.rpc.RpcContext;
import org.apache.dubbo.rpc.RpcException;

/**
 * A Java Dubbo 3.3 consumer of GreetingService that reports which providers its router chain lets
 * each kind of call reach: the Java side of rudder's routing parity test.
 *
 * <p>It discovers the providers through ZooKeeper at interface level, and reads routing rules from the
 * same ZooKeeper, which Dubbo uses as config center when none is configured
 * ({@code /dubbo/config/dubbo/<key>}). Rules are read once when the reference starts (the tag router
 * and the condition routers read their node synchronously on the first provider notification), so a
 * test writes the rules first and then runs the probe.
 *
 * <p>With {@code rudder.registry.address} set (a whole registry URL such as
 * {@code nacos://127.0.0.1:PORT}), it discovers the providers through that registry instead, and reads
 * the rules from it as Dubbo does when a registry doubles as config center (for Nacos: Dubbo's
 * {@code registryAsConfigCenter} and {@code NacosDynamicConfiguration}, data id = the rule key, group
 * {@code dubbo}, in the URL's {@code namespace}, else Nacos's {@code public}: the config center's
 * default namespace {@code dubbo} is dropped by {@code NacosDynamicConfigurationFactory}). Dubbo's
 * file caches (registry, mapping, metadata under ~/.dubbo) are off then, as in {@link MigrationProbe}:
 * a cache left by an earlier run against another server on the same port would be read before the
 * server.
 *
 * <p>Settings (system property, or the environment variable in brackets):
 * <ul>
 *   <li>{@code rudder.zk.address} [RUDDER_ZK_ADDRESS], default 127.0.0.1:2181</li>
 *   <li>{@code rudder.registry.address} [RUDDER_REGISTRY_ADDRESS], optional: a whole registry URL
 *       ({@code nacos://127.0.0.1:PORT}) used instead of ZooKeeper</li>
 *   <li>{@code rudder.application} [RUDDER_APPLICATION], default parity-app: the consumer application
 *       (rules keyed {@code <app>.condition-router} apply to it)</li>
 *   <li>{@code rudder.probe.calls} [RUDDER_PROBE_CALLS], default 64: calls per spec</li>
 *   <li>{@code rudder.probe.specs} [RUDDER_PROBE_SPECS]: the calls, one spec a line,
 *       {@code label<TAB>method<TAB>argument<TAB>key=value&key=value}
 *       (tabs, since a tag may hold {@code |}). The method is {@code whoAmI} (no argument)
 *       or {@code sayHello} (the argument is the name); the last field holds the client attachments
 *       set before each call, such as {@code dubbo.tag=gray&dubbo.force.tag=true}, or is empty.</li>
 *   <li>{@code rudder.timeout} [RUDDER_TIMEOUT]: per-call timeout in ms, default 3000</li>
 * </ul>
 * Prints one line per spec, in the order given,
 * {@code RESULT <label> <outcome>=<count>,<outcome>=<count>...} with outcomes sorted: the instance
 * name of each provider that answered, or {@code error:no-provider} when routing left no provider
 * (RpcException code 6), {@code error:rpc-<code>} for another RpcException, {@code error:<class>} for
 * anything else. Then {@code DONE}. Exits 0 once every spec ran, 2 on a bad spec.
 */
public final class RoutingProbe {

    private RoutingProbe() {
    }

    /** One kind of call: what to call, with which attachments. */
    private static final class Spec {
        final String label;
        final String method;
        final String argument;
        final Map<String, String> attachments;

        Spec(String label, String method, String argument, Map<String, String> attachments) {
            this.label = label;
            this.method = method;
            this.argument = argument;
            this.attachments = attachments;
        }
    }

    public static void main(String[] args) {
        List<Spec> specs;
        try {
            specs = parseSpecs(Settings.get("rudder.probe.specs", ""));
        } catch (IllegalArgumentException e) {
            System.err.println("RoutingProbe: " + e.getMessage());
            System.exit(2);
            return;
        }
        int calls = Settings.getInt("rudder.probe.calls", 64);
        LoopbackHost.pin();
        // rudder discovers providers at interface level; Dubbo 3.3 would otherwise prefer the
        // application-level view (APPLICATION_FIRST). The routers are the same in both.
        System.setProperty("dubbo.application.service-discovery.migration", "FORCE_INTERFACE");

        String zk = Settings.get("rudder.zk.address", "127.0.0.1:2181");
        ApplicationConfig application = new ApplicationConfig(Settings.get("rudder.application", "parity-app"));
        application.setQosEnable(false);

        ReferenceConfig<GreetingService> reference = new ReferenceConfig<>();
        reference.setInterface(GreetingService.class);
        reference.setTimeout(Settings.getInt("rudder.timeout", 3000));
        // One provider per call: a retry would hide which provider the router chain allowed first.
        reference.setRetries(0);
        reference.setLoadbalance("random");
        Map<String, String> params = new HashMap<>();
        params.put("serialization", "hessian2");
        params.put("prefer.serialization", "hessian2");
        reference.setParameters(params);

        // A whole registry URL (nacos://127.0.0.1:PORT) wins over the ZooKeeper address.
        String registryAddress = Settings.get("rudder.registry.address", "").trim();
        RegistryConfig registry;
        if (registryAddress.isEmpty()) {
            registry = new RegistryConfig("zookeeper://" + zk);
        } else {
            registry = new RegistryConfig(registryAddress);
            application.setEnableFileCache(false);
            Map<String, String> registryParams = new LinkedHashMap<>();
            registryParams.put("file-cache", "false");
            registry.setParameters(registryParams);
        }

        DubboBootstrap bootstrap = DubboBootstrap.getInstance()
                .application(application)
                .registry(registry)
                .reference(reference);
        bootstrap.start();
        GreetingService greeting = reference.get();

        for (Spec spec : specs) {
            Map<String, Integer> outcomes = new TreeMap<>();
            for (int i = 0; i < calls; i++) {
                outcomes.merge(callOnce(greeting, spec), 1, Integer::sum);
            }
            List<String> parts = new ArrayList<>();
            outcomes.forEach((outcome, count) -> parts.add(outcome + "=" + count));
            System.out.println("RESULT " + spec.label + " " + String.join(",", parts));
        }
        System.out.println("DONE");
        System.out.flush();
        bootstrap.stop();
        System.exit(0);
    }

    private static String callOnce(GreetingService greeting, Spec spec) {
        RpcContext.getClientAttachment().clearAttachments();
        spec.attachments.forEach((key, value) -> RpcContext.getClientAttachment().setAttachment(key, value));
        try {
            if ("whoAmI".equals(spec.method)) {
                return greeting.whoAmI();
            }
            String answer = greeting.sayHello(spec.argument);
            int from = answer.lastIndexOf(", from ");
            return from < 0 ? "unexpected:" + answer : answer.substring(from + ", from ".length());
        } catch (RuntimeException e) {
            return outcome(e);
        }
    }

    /**
     * How a failed call is reported: {@code error:no-provider} when routing left no provider (RpcException
     * code 6), {@code error:rpc-<code>} for another RpcException, {@code error:<class>} for anything else.
     */
    /**
     * The {@code k=v&k=v} pairs of {@code text}, in order; {@code what} names them in the error
     * thrown for a pair without a key, which quotes {@code line}.
     */
    static Map<String, String> pairs(String text, String what, String line) {
        Map<String, String> pairs = new LinkedHashMap<>();
        for (String pair : text.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(what + " must be key=value, got '" + pair + "' in: " + line);
            }
            pairs.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
        return pairs;
    }

    static String outcome(RuntimeException failure) {
        if (failure instanceof RpcException) {
            RpcException e = (RpcException) failure;
            return e.getCode() == RpcException.NO_INVOKER_AVAILABLE_AFTER_FILTER
                    ? "error:no-provider"
                    : "error:rpc-" + e.getCode();
        }
        return "error:" + failure.getClass().getSimpleName();
    }

    static List<Spec> parseSpecs(String text) {
        List<Spec> specs = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            String[] fields = line.split("\t", -1);
            if (fields.length != 4 || fields[0].isBlank() || fields[0].contains(" ")) {
                throw new IllegalArgumentException("spec must be label, method, argument, attachments separated by tabs, got: " + line);
            }
            String method = fields[1];
            if (!"whoAmI".equals(method) && !"sayHello".equals(method)) {
                throw new IllegalArgumentException("unknown method " + method + " in spec: " + line);
            }
            specs.add(new Spec(fields[0], method, fields[2], pairs(fields[3], "attachment", line)));
        }
        if (specs.isEmpty()) {
            throw new IllegalArgumentException("no spec given (rudder.probe.specs / RUDDER_PROBE_SPECS)");
        }
        return specs;
    }
}
