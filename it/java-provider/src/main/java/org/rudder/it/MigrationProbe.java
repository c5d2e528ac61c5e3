package org.rudder.it;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.registry.client.migration.MigrationInvoker;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.cluster.ClusterInvoker;

/**
 * A Java Dubbo 3.3 consumer of GreetingService that reports, for each migration setting, which view
 * of the service its {@code MigrationInvoker} uses and which providers its calls reach: the Java
 * side of rudder's migration parity test (application-level discovery, issue 16).
 *
 * <p>One reference per setting, made one after the other with {@link ReferenceConfig#get()} (not
 * through the bootstrap, whose reference cache would hand every later reference of the same
 * interface the first one's proxy). The step is the consumer parameter {@code migration.step}: the
 * key Dubbo 3.3 reads first ({@code MigrationRule.getStep(consumerURL)}: the rule's step, else the
 * consumer URL's {@code migration.step}, else the global {@code dubbo.application.migration.step},
 * else {@code dubbo.application.service-discovery.migration}, else APPLICATION_FIRST), and the key
 * a rudder reference takes; likewise {@code migration.threshold} for the address comparator.
 *
 * <p>Waiting: {@code check=false}, so {@code get()} returns whatever the views hold; then the probe
 * waits (at most {@code rudder.probe.await.ms}) until each view the reference subscribed to lists
 * the addresses the test says ZooKeeper holds. With every node already in ZooKeeper, which the test
 * makes sure of first, both views are filled before {@code get()} returns (the interface-level
 * subscription and the first instance event with its metadata fetch run in the refer call); the
 * wait covers a metadata fetch that failed and is retried. APPLICATION_FIRST recomputes its choice
 * on every address notification of either view, so once both views are full the choice is final.
 * Past the deadline the probe reports what it has, so the test fails on a difference, not a hang.
 * Dubbo's file caches (registry, mapping, metadata under ~/.dubbo) are off: a cache left by an
 * earlier run against another ZooKeeper on the same port would be read before ZooKeeper.
 *
 * <p>Settings (system property, or the environment variable in brackets):
 * <ul>
 *   <li>{@code rudder.zk.address} [RUDDER_ZK_ADDRESS], default 127.0.0.1:2181</li>
 *   <li>{@code rudder.registry.address} [RUDDER_REGISTRY_ADDRESS], optional: a whole registry URL
 *       ({@code nacos://127.0.0.1:PORT}) instead of ZooKeeper</li>
 *   <li>{@code rudder.application} [RUDDER_APPLICATION], default migration-app: the consumer application</li>
 *   <li>{@code rudder.probe.references} [RUDDER_PROBE_REFERENCES]: the references, one a line,
 *       {@code label<TAB>key=value&key=value<TAB>interface<TAB>application}: the consumer parameters,
 *       e.g. {@code migration.step=APPLICATION_FIRST&migration.threshold=2}, then the addresses the
 *       interface-level and the application-level view are awaited to list (each only when the
 *       reference subscribes to that view)</li>
 *   <li>{@code rudder.probe.calls} [RUDDER_PROBE_CALLS], default 64: whoAmI calls per reference</li>
 *   <li>{@code rudder.probe.await.ms} [RUDDER_PROBE_AWAIT_MS], default 30000</li>
 *   <li>{@code rudder.timeout} [RUDDER_TIMEOUT]: per-call timeout in ms, default 3000</li>
 * </ul>
 * Prints, per reference in the order given, {@code VIEWS <label> interface=<n> application=<n>
 * current=<view>} (a view the reference does not subscribe to is {@code -}; {@code current} is the
 * view the invoker calls through: {@code interface}, {@code application} or {@code none}) and
 * {@code RESULT <label> <outcome>=<count>,...} with outcomes sorted, named as {@link RoutingProbe}
 * names them. Then {@code DONE}. Exits 0 once every reference ran, 2 on a bad setting.
 */
public final class MigrationProbe {

    private MigrationProbe() {
    }

    /** One reference: its label, the consumer parameters that set its migration step, the view sizes to await. */
    private static final class Spec {
        final String label;
        final Map<String, String> parameters;
        final int awaitInterface;
        final int awaitApplication;

        Spec(String label, Map<String, String> parameters, int awaitInterface, int awaitApplication) {
            this.label = label;
            this.parameters = parameters;
            this.awaitInterface = awaitInterface;
            this.awaitApplication = awaitApplication;
        }
    }

    public static void main(String[] args) throws InterruptedException {
        List<Spec> specs;
        int calls;
        int awaitMillis;
        int timeout;
        try {
            specs = parseSpecs(Settings.get("rudder.probe.references", ""));
            calls = Settings.getInt("rudder.probe.calls", 64);
            awaitMillis = Settings.getInt("rudder.probe.await.ms", 30000);
            timeout = Settings.getInt("rudder.timeout", 3000);
        } catch (IllegalArgumentException e) {
            System.err.println("MigrationProbe: " + e.getMessage());
            System.exit(2);
            return;
        }
        LoopbackHost.pin();

        String zk = Settings.get("rudder.zk.address", "127.0.0.1:2181");
        ApplicationConfig application = new ApplicationConfig(Settings.get("rudder.application", "migration-app"));
        application.setQosEnable(false);
        application.setEnableFileCache(false);
        // A whole registry URL (nacos://127.0.0.1:PORT) wins over the ZooKeeper address.
        RegistryConfig registry =
                new RegistryConfig(Settings.get("rudder.registry.address", "zookeeper://" + zk).trim());
        Map<String, String> registryParams = new LinkedHashMap<>();
        registryParams.put("file-cache", "false");
        registry.setParameters(registryParams);
        DubboBootstrap bootstrap = DubboBootstrap.getInstance()
                .application(application)
                .registry(registry);
        bootstrap.start();

        for (Spec spec : specs) {
            ReferenceConfig<GreetingService> reference = new ReferenceConfig<>();
            reference.setInterface(GreetingService.class);
            reference.setTimeout(timeout);
            // One provider per call: a retry would hide which view the call went through first.
            reference.setRetries(0);
            reference.setLoadbalance("random");
            reference.setCheck(false);
            Map<String, String> params = new LinkedHashMap<>(spec.parameters);
            params.put("serialization", "hessian2");
            params.put("prefer.serialization", "hessian2");
            reference.setParameters(params);
            GreetingService greeting = reference.get();

            Invoker<?> invoker = reference.getInvoker();
            if (!(invoker instanceof MigrationInvoker)) {
                System.err.println("MigrationProbe: the reference's invoker is a "
                        + invoker.getClass().getName() + ", not Dubbo's MigrationInvoker");
                System.exit(1);
                return;
            }
            MigrationInvoker<?> migration = (MigrationInvoker<?>) invoker;
            long deadline = System.currentTimeMillis() + awaitMillis;
            while (!filled(migration.getInvoker(), spec.awaitInterface)
                    || !filled(migration.getServiceDiscoveryInvoker(), spec.awaitApplication)) {
                if (System.currentTimeMillis() > deadline) {
                    System.err.println("MigrationProbe: " + spec.label + ": views not filled within " + awaitMillis + " ms");
                    break;
                }
                // Dubbo offers no hook for "a view changed" outside its own MigrationInvoker.
                Thread.sleep(20);
            }

            Map<String, Integer> outcomes = new TreeMap<>();
            for (int i = 0; i < calls; i++) {
                outcomes.merge(callOnce(greeting), 1, Integer::sum);
            }
            System.out.println("VIEWS " + spec.label
                    + " interface=" + size(migration.getInvoker())
                    + " application=" + size(migration.getServiceDiscoveryInvoker())
                    + " current=" + current(migration));
            List<String> parts = new ArrayList<>();
            outcomes.forEach((outcome, count) -> parts.add(outcome + "=" + count));
            System.out.println("RESULT " + spec.label + " " + String.join(",", parts));
            System.out.flush();
        }
        System.out.println("DONE");
        System.out.flush();
        bootstrap.stop();
        System.exit(0);
    }

    /** Whether the view is absent (the step does not subscribe to it) or lists at least {@code want}. */
    private static boolean filled(ClusterInvoker<?> view, int want) {
        return view == null || view.getDirectory().getAllInvokers().size() >= want;
    }

    private static String size(ClusterInvoker<?> view) {
        return view == null ? "-" : String.valueOf(view.getDirectory().getAllInvokers().size());
    }

    private static String current(MigrationInvoker<?> migration) {
        ClusterInvoker<?> current = migration.getCurrentAvailableInvoker();
        if (current == null) {
            return "none";
        }
        if (current == migration.getServiceDiscoveryInvoker()) {
            return "application";
        }
        return current == migration.getInvoker() ? "interface" : "unknown";
    }

    private static String callOnce(GreetingService greeting) {
        try {
            return greeting.whoAmI();
        } catch (RuntimeException e) {
            return RoutingProbe.outcome(e);
        }
    }

    private static int count(String field, String line) {
        try {
            int count = Integer.parseInt(field.trim());
            if (count >= 0) {
                return count;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("a view size must be a count, got '" + field + "' in: " + line);
    }

    static List<Spec> parseSpecs(String text) {
        List<Spec> specs = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            String[] fields = line.split("\t", -1);
            if (fields.length != 4 || fields[0].isBlank() || fields[0].contains(" ")) {
                throw new IllegalArgumentException(
                        "reference must be label, parameters, interface and application view sizes separated by tabs, got: "
                                + line);
            }
            Map<String, String> parameters = RoutingProbe.pairs(fields[1], "parameter", line);
            specs.add(new Spec(fields[0], parameters, count(fields[2], line), count(fields[3], line)));
        }
        if (specs.isEmpty()) {
            throw new IllegalArgumentException("no reference given (rudder.probe.references / RUDDER_PROBE_REFERENCES)");
        }
        return specs;
    }
}
