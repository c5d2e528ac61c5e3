package org.rudder.it;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * A GreetingService whose sayHello and whoAmI throw an IllegalStateException ("database down") while
 * a file exists ({@code rudder.failing.file} [RUDDER_FAILING_FILE]): the failing provider of rudder's
 * outlier-ejection tests, which the test breaks and mends by creating and deleting the file.
 */
public final class FailingGreetingService implements GreetingService {
    private final GreetingService inner;
    private final Path flag;

    public FailingGreetingService(GreetingService inner, String flagFile) {
        this.inner = inner;
        this.flag = Paths.get(flagFile);
    }

    private void check() {
        if (Files.exists(flag)) {
            throw new IllegalStateException("database down");
        }
    }

    @Override
    public String sayHello(String name) {
        check();
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
        check();
        return inner.whoAmI();
    }
}
