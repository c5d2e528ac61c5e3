package org.rudder.it;

/**
 * The service rudder's interop tests call. Every peer (Java, node) exports it
 * under this exact interface name so one rudder test can target any of them.
 */
public interface GreetingService {

    /** Returns "Hello {name}, from {instance}" so a test can tell which provider answered. */
    String sayHello(String name);

    /** Primitive arguments and result: exercises the "II" descriptor and an int body. */
    int add(int a, int b);

    /** Returns a copy of the user with age + 1 and a tag naming the instance: a POJO round trip. */
    User echoUser(User user);

    /** Always returns null, which Java encodes as the RESPONSE_NULL_VALUE flag. */
    String nullValue();

    /** Always throws a {@link GreetingException} carrying {@code msg}: a business exception on the wire. */
    String fail(String msg) throws GreetingException;

    /** Sleeps {@code millis} then returns "slept {millis}": for timeout tests. */
    String slow(int millis);

    /** Returns the provider's instance name, nothing else: routing tests collect who answered. */
    String whoAmI();
}
