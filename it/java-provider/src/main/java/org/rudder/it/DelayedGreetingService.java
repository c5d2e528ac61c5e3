package org.rudder.it;

/**
 * A GreetingService that answers sayHello and whoAmI only after a fixed delay: the slow provider of
 * rudder's load-balancing tests ({@code rudder.delay.ms} [RUDDER_DELAY_MS]).
 */
public final class DelayedGreetingService implements GreetingService {
    private final GreetingService inner;
    private final long delayMillis;

    public DelayedGreetingService(GreetingService inner, long delayMillis) {
        this.inner = inner;
        this.delayMillis = delayMillis;
    }

    private void pause() {
        try {
            Thread.sleep(delayMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String sayHello(String name) {
        pause();
        return inner.sayHello(name);
    }

    @Override
    public int add(int a, int b) {
        return inner.add(a, b);
    }

    @Override
    public User echoUser(User user) {
        return inner.echoUser(user);
    }

    @Override
    public String nullValue() {
        return inner.nullValue();
    }

    @Override
    public String fail(String msg) throws GreetingException {
        return inner.fail(msg);
    }

    @Override
    public String slow(int millis) {
        return inner.slow(millis);
    }

    @Override
    public String whoAmI() {
        pause();
        return inner.whoAmI();
    }
}
