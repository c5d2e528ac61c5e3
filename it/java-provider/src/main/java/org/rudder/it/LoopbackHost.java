package org.rudder.it;

import java.lang.reflect.Field;
import org.apache.dubbo.common.utils.NetUtils;

/**
 * Makes Dubbo treat 127.0.0.1 as this machine's address.
 *
 * <p>Dubbo 3.3 replaces any 127.* host with NetUtils.getLocalHost() (the first
 * non-loopback address) in several places: a consumer's NettyClient connects to
 * filterLocalHost(providerHost), so a provider registered as 127.0.0.1 would be
 * dialled on the machine's LAN address and refused. getLocalHost() caches its
 * answer in a private static field; seeding that cache with 127.0.0.1 before the
 * bootstrap starts keeps every address Dubbo derives on loopback. There is no
 * public setting for it (127.* in DUBBO_IP_TO_BIND/REGISTRY is rejected).
 */
final class LoopbackHost {

    private LoopbackHost() {
    }

    static void pin() {
        try {
            Field cached = NetUtils.class.getDeclaredField("HOST_ADDRESS");
            cached.setAccessible(true);
            cached.set(null, "127.0.0.1");
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot pin Dubbo's local host to 127.0.0.1", e);
        }
    }
}
