package org.rudder.it;

import org.apache.dubbo.common.URL;
import org.apache.dubbo.rpc.cluster.Configurator;
import org.apache.dubbo.rpc.cluster.ConfiguratorFactory;

/**
 * Keeps a dubbo:// provider on loopback, which Dubbo 3.3 refuses to do by itself:
 * it rejects 127.* in DUBBO_IP_TO_BIND / DUBBO_IP_TO_REGISTRY, turns a 127.0.0.1
 * protocol host into "anyhost" plus the machine's first non-loopback address, and
 * its Netty server binds 0.0.0.0 whenever the bind address starts with "127.".
 *
 * <p>ServiceConfig.buildUrl runs the ConfiguratorFactory named after the protocol
 * ("dubbo", see META-INF/dubbo) on every service URL before export. This one sets
 * the advertised host to 127.0.0.1 and the bind address to the IPv4-mapped
 * spelling of loopback, which Java resolves to 127.0.0.1 but which Dubbo's
 * "starts with 127." test does not catch. bind.ip and anyhost never reach the
 * registry (DefaultServiceURLCustomizer drops them).
 */
public class LoopbackConfiguratorFactory implements ConfiguratorFactory {

    @Override
    public Configurator getConfigurator(URL url) {
        return new LoopbackConfigurator(url);
    }

    private static final class LoopbackConfigurator implements Configurator {

        private final URL url;

        LoopbackConfigurator(URL url) {
            this.url = url;
        }

        @Override
        public URL getUrl() {
            return url;
        }

        @Override
        public URL configure(URL serviceUrl) {
            return serviceUrl.setHost("127.0.0.1")
                    .addParameter("anyhost", "false")
                    .addParameter("bind.ip", "::ffff:127.0.0.1");
        }
    }
}
