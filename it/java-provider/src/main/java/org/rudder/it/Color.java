package org.rudder.it;

/** A Java enum: hessian writes it as an object of this class with one field, {@code name}. */
public enum Color {
    RED,
    GREEN,
    BLUE
}
