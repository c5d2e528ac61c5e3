package org.rudder.it.proto;

import org.apache.dubbo.common.stream.StreamObserver;

/**
 * The Greeter of {@code proto/greeter.proto} as a plain Java interface over its generated messages:
 * Dubbo 3.3 exports it over tri:// as a protobuf (IDL) service at {@code /org.rudder.it.proto.Greeter/...}
 * (a gRPC client's {@code SayHello} finds {@code sayHello}: Dubbo tries the lower-case first letter).
 */
public interface Greeter {

    /** One request, one reply. */
    HelloReply sayHello(HelloRequest request);

    /** One request, {@code count} replies (server streaming). */
    void sayHelloStream(HelloStreamRequest request, StreamObserver<HelloReply> replies);
}
