package org.rudder.it.proto;

import org.apache.dubbo.common.stream.StreamObserver;

/** Answers with the provider's instance name, so tests see routing and failover. */
public final class GreeterImpl implements Greeter {

    private final String instance;

    public GreeterImpl(String instance) {
        this.instance = instance;
    }

    @Override
    public HelloReply sayHello(HelloRequest request) {
        return reply("Hello " + request.getName() + ", from " + instance);
    }

    @Override
    public void sayHelloStream(HelloStreamRequest request, StreamObserver<HelloReply> replies) {
        for (int i = 0; i < request.getCount(); i++) {
            replies.onNext(reply("Hello " + request.getName() + " #" + i + ", from " + instance));
        }
        replies.onCompleted();
    }

    private HelloReply reply(String message) {
        return HelloReply.newBuilder().setMessage(message).setServedBy(instance).build();
    }
}
