package org.rudder.it;

import java.util.ArrayList;
import java.util.List;

/** The provider-side implementation; {@code instance} tells tests which provider answered. */
public class GreetingServiceImpl implements GreetingService {

    private final String instance;

    public GreetingServiceImpl(String instance) {
        this.instance = instance;
    }

    @Override
    public String sayHello(String name) {
        return "Hello " + name + ", from " + instance;
    }

    @Override
    public int add(int a, int b) {
        return a + b;
    }

    @Override
    public User echoUser(User user) {
        if (user == null) {
            return null;
        }
        List<String> tags = new ArrayList<>();
        if (user.getTags() != null) {
            tags.addAll(user.getTags());
        }
        tags.add("seen-by:" + instance);
        return new User(user.getName(), user.getAge() + 1, tags);
    }

    @Override
    public String nullValue() {
        return null;
    }

    @Override
    public String fail(String msg) {
        throw new GreetingException(msg);
    }

    @Override
    public String slow(int millis) {
        try {
            Thread.sleep(Math.max(0, millis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return "slept " + millis;
    }

    @Override
    public String whoAmI() {
        return instance;
    }
}
