package org.rudder.it;

/**
 * The business exception {@link GreetingService#fail} throws. It lives in the
 * same jar as the interface, so Dubbo's ExceptionFilter sends it to the
 * consumer as is (a hessian object of this class) instead of wrapping it.
 */
public class GreetingException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public GreetingException() {
        super();
    }

    public GreetingException(String message) {
        super(message);
    }
}
