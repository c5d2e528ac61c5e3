package org.rudder.it;

import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.Date;
import java.util.Objects;

/** A POJO whose fields are the Java value types rudder carries typed: money, dates, an enum. */
public class Invoice implements Serializable {

    private static final long serialVersionUID = 1L;

    private String id;
    private BigDecimal amount;
    private BigInteger serial;
    private LocalDate due;
    private LocalDateTime issued;
    private Instant paid;
    private Duration grace;
    private Date created;
    private Color color;

    /** Hessian needs a no-argument constructor. */
    public Invoice() {
    }

    public String getId() {
        return id;
    }

    public BigDecimal getAmount() {
        return amount;
    }

    public LocalDate getDue() {
        return due;
    }

    /**
     * A getter makes the field a bean property: Dubbo's generic result ({@code PojoUtils.generalize})
     * holds only those (and public fields), so {@code rudder invoke --generic} shows the enum field,
     * as its constant's name. The fields without one (serial, issued, ...) are absent from it, as Java
     * generic consumers see them.
     */
    public Color getColor() {
        return color;
    }

    /**
     * The invoice a provider sends back: the amount doubled, the due date one day later, every other
     * field as received, so a test sees each type go both ways.
     */
    public Invoice next() {
        Invoice out = new Invoice();
        out.id = id + "+1";
        out.amount = amount == null ? null : amount.multiply(BigDecimal.valueOf(2));
        out.serial = serial == null ? null : serial.add(BigInteger.ONE);
        out.due = due == null ? null : due.plusDays(1);
        out.issued = issued;
        out.paid = paid;
        out.grace = grace;
        out.created = created;
        out.color = color;
        return out;
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof Invoice)) {
            return false;
        }
        Invoice that = (Invoice) other;
        return Objects.equals(id, that.id) && Objects.equals(amount, that.amount)
                && Objects.equals(serial, that.serial) && Objects.equals(due, that.due)
                && Objects.equals(issued, that.issued) && Objects.equals(paid, that.paid)
                && Objects.equals(grace, that.grace) && Objects.equals(created, that.created)
                && color == that.color;
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, amount, serial, due, issued, paid, grace, created, color);
    }

    @Override
    public String toString() {
        return "Invoice{id=" + id + ", amount=" + amount + ", serial=" + serial + ", due=" + due
                + ", issued=" + issued + ", paid=" + paid + ", grace=" + grace + ", created="
                + created + ", color=" + color + "}";
    }
}
