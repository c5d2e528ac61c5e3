package org.rudder.it;

import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.SslConfig;

/**
 * TLS on the provider's port, for rudder's TLS tests: RUDDER_TLS_DIR names a directory holding
 * server.pem (the certificate chain) and server.key (its PKCS#8 key), made by the test; with
 * RUDDER_TLS_MUTUAL=true, client certificates signed by client-ca.pem there are required (Dubbo's
 * SSLConfigCertProvider makes a trust collection mean AuthPolicy.CLIENT_AUTH, i.e. REQUIRE).
 */
final class ProviderTls {
    private ProviderTls() {}

    /** The SslConfig the environment asks for (and ssl-enabled on the protocol), or null for none. */
    static SslConfig configure(ProtocolConfig protocol) {
        String dir = Settings.get("rudder.tls.dir", null);
        if (dir == null || dir.trim().isEmpty()) {
            return null;
        }
        SslConfig ssl = new SslConfig();
        ssl.setServerKeyCertChainPath(dir + "/server.pem");
        ssl.setServerPrivateKeyPath(dir + "/server.key");
        if (Boolean.parseBoolean(Settings.get("rudder.tls.mutual", "false").trim())) {
            ssl.setServerTrustCertCollectionPath(dir + "/client-ca.pem");
        }
        protocol.setSslEnabled(true);
        return ssl;
    }
}
