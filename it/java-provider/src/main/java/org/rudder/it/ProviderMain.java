package org.rudder.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.rudder.it.proto.Greeter;
import org.rudder.it.proto.GreeterImpl;

/**
 * Starts one GreetingService provider on 127.0.0.1 and registers it in ZooKeeper.
 *
 * <p>Settings (system property, or the environment variable in brackets):
 * <ul>
 *   <li>{@code rudder.zk.address} [RUDDER_ZK_ADDRESS], default 127.0.0.1:2181</li>
 *   <li>{@code rudder.registry.address} [RUDDER_REGISTRY_ADDRESS], optional: a whole registry URL
 *   ({@code nacos://127.0.0.1:PORT}) used instead of the ZooKeeper address</li>
 *   <li>{@code rudder.dubbo.port} [RUDDER_DUBBO_PORT], default 20880</li>
 *   <li>{@code rudder.instance} [RUDDER_INSTANCE], default java-PORT; echoed by sayHello</li>
 *   <li>{@code rudder.weight} [RUDDER_WEIGHT], optional</li>
 *   <li>{@code rudder.version} [RUDDER_VERSION], optional</li>
 *   <li>{@code rudder.group} [RUDDER_GROUP], optional</li>
 *   <li>{@code rudder.warmup} [RUDDER_WARMUP], optional, milliseconds</li>
 *   <li>{@code rudder.register-mode} or {@code rudder.register.mode} [RUDDER_REGISTER_MODE], interface |
 *       instance | all, default all: Dubbo's {@code dubbo.registry.register-mode}, set on the registry (and
 *       the application); {@code instance} writes only {@code /services/<app>/<host:port>}, the mapping
 *       and the metadata, no {@code /dubbo/<interface>/providers} node</li>
 *   <li>{@code rudder.application} [RUDDER_APPLICATION], default rudder-it-java-provider</li>
 *   <li>{@code rudder.tag} [RUDDER_TAG], optional: the static {@code dubbo.tag} the service registers</li>
 *   <li>{@code rudder.delay.ms} [RUDDER_DELAY_MS], optional: sayHello and whoAmI answer this much later</li>
 *   <li>{@code rudder.protocol} [RUDDER_PROTOCOL], dubbo (default) or tri: the protocol the services are
 *       exported over, on {@code rudder.dubbo.port}; over tri, the protobuf service
 *       {@code org.rudder.it.proto.Greeter} (proto/greeter.proto) is exported too, with the same version
 *       and group</li>
 *   <li>{@code rudder.metadata.storage.type} [RUDDER_METADATA_STORAGE_TYPE], local (default) or remote:
 *       Dubbo's {@code dubbo.application.metadata-type}; {@code remote} publishes each revision's
 *       MetadataInfo under {@code /dubbo/metadata/<app>/<revision>} (the registry doubling as metadata
 *       center) and says {@code dubbo.metadata.storage-type=remote} in the instance</li>
 *   <li>{@code rudder.metadata.v2.only} [RUDDER_METADATA_V2_ONLY], {@code true} to set Dubbo's
 *       {@code dubbo.application.only-use-metadata-v2}: with tri, only MetadataServiceV2 (protobuf)
 *       is exported, not the hessian2 MetadataService. Either way, with tri and protobuf-java on the
 *       classpath (as here), Dubbo 3.3 exports MetadataServiceV2 and says {@code meta-v=2.0.0}</li>
 * </ul>
 * A line {@code export-later} on stdin exports one more service, GreetingService in group
 * {@code later} (a new MetadataInfo revision at application level), and prints
 * {@code EXPORTED <url>}.
 * Binds and advertises 127.0.0.1 only (see {@link LoopbackConfiguratorFactory}).
 * Prints one line {@code READY <provider url>} on stdout once exported and registered,
 * then runs until killed. Dubbo's own logging goes to stderr.
 */
public final class ProviderMain {

    private ProviderMain() {
    }

    /** Reads commands from stdin in the background (none when stdin is closed or empty). */
    private static void listenForCommands(GreetingService impl, String version) {
        Thread commands = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.trim().equals("export-later")) {
                        ServiceConfig<GreetingService> later = new ServiceConfig<>();
                        later.setInterface(GreetingService.class);
                        later.setRef(impl);
                        later.setGroup("later");
                        if (version != null) {
                            later.setVersion(version);
                        }
                        later.export();
                        System.out.println("EXPORTED " + later.getExportedUrls().get(0).toFullString());
                        System.out.flush();
                    }
                }
            } catch (IOException e) {
                // stdin gone: no more commands.
            }
        }, "rudder-commands");
        commands.setDaemon(true);
        commands.start();
    }

    public static void main(String[] args) throws InterruptedException {
        LoopbackHost.pin();
        String zk = Settings.get("rudder.zk.address", "127.0.0.1:2181");
        int port = Settings.getInt("rudder.dubbo.port", 20880);
        String instance = Settings.get("rudder.instance", "java-" + port);
        String weight = Settings.get("rudder.weight", null);
        String version = Settings.get("rudder.version", null);
        String group = Settings.get("rudder.group", null);
        String warmup = Settings.get("rudder.warmup", null);
        String registerMode = Settings.get("rudder.register-mode",
                Settings.get("rudder.register.mode", "all")).trim();
        String appName = Settings.get("rudder.application", "rudder-it-java-provider");
        String tag = Settings.get("rudder.tag", null);

        ApplicationConfig application = new ApplicationConfig(appName);
        application.setRegisterMode(registerMode);
        // Several providers run side by side in tests; the QoS console would fight over port 22222.
        application.setQosEnable(false);
        String storageType = Settings.get("rudder.metadata.storage.type", null);
        if (storageType != null) {
            application.setMetadataType(storageType.trim());
        }
        if (Boolean.parseBoolean(Settings.get("rudder.metadata.v2.only", "false").trim())) {
            application.setOnlyUseMetadataV2(true);
        }

        // A whole registry URL (nacos://127.0.0.1:PORT?namespace=dev) wins over the ZooKeeper address.
        RegistryConfig registry =
                new RegistryConfig(Settings.get("rudder.registry.address", "zookeeper://" + zk).trim());
        // The registry's own register-mode is what genCompatibleRegistries reads first.
        registry.setRegisterMode(registerMode);

        String protocolName = Settings.get("rudder.protocol", "dubbo");
        ProtocolConfig protocol = new ProtocolConfig(protocolName, port);
        protocol.setHost("127.0.0.1");
        protocol.setSerialization("hessian2");
        org.apache.dubbo.config.SslConfig ssl = ProviderTls.configure(protocol);

        ServiceConfig<GreetingService> service = new ServiceConfig<>();
        service.setInterface(GreetingService.class);
        String delay = Settings.get("rudder.delay.ms", null);
        GreetingService impl = new GreetingServiceImpl(instance);
        if (delay != null) {
            impl = new DelayedGreetingService(impl, Long.parseLong(delay.trim()));
        }
        String failingFile = Settings.get("rudder.failing.file", null);
        if (failingFile != null) {
            impl = new FailingGreetingService(impl, failingFile.trim());
        }
        service.setRef(impl);
        if (version != null) {
            service.setVersion(version);
        }
        if (group != null) {
            service.setGroup(group);
        }
        if (weight != null) {
            service.setWeight(Integer.parseInt(weight.trim()));
        }
        if (tag != null) {
            service.setTag(tag);
        }
        if (warmup != null) {
            service.setWarmup(Integer.parseInt(warmup.trim()));
        }
        Map<String, String> extra = new HashMap<>();
        extra.put("rudder.instance", instance);
        service.setParameters(extra);

        DubboBootstrap bootstrap = DubboBootstrap.getInstance()
                .application(application)
                .registry(registry)
                .protocol(protocol)
                .service(service)
                .service(JavaTypesServices.create(version, group));
        if (ssl != null) {
            bootstrap.ssl(ssl);
        }
        if ("tri".equals(protocolName)) {
            // The protobuf (IDL) service of proto/greeter.proto, beside the Java interface ones.
            ServiceConfig<Greeter> greeter = new ServiceConfig<>();
            greeter.setInterface(Greeter.class);
            greeter.setRef(new GreeterImpl(instance));
            if (version != null) {
                greeter.setVersion(version);
            }
            if (group != null) {
                greeter.setGroup(group);
            }
            bootstrap.service(greeter);
        }
        bootstrap.start();

        String url = service.getExportedUrls().isEmpty()
                ? "?"
                : service.getExportedUrls().get(0).toFullString();
        System.out.println("READY " + url);
        System.out.flush();
        listenForCommands(new GreetingServiceImpl(instance), version);

        // Block forever; a SIGTERM runs Dubbo's shutdown hook, which unregisters the node.
        new CountDownLatch(1).await();
    }
}
