package org.rudder.it;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.Period;
import java.time.ZonedDateTime;
import java.util.Date;

/** Echoes and describes the values it receives; see {@link JavaTypesService}. */
public class JavaTypesServiceImpl implements JavaTypesService {

    @Override
    public BigDecimal echoDecimal(BigDecimal value) {
        return value;
    }

    @Override
    public String describeDecimal(BigDecimal value) {
        return value == null ? "null" : value + " scale=" + value.scale();
    }

    @Override
    public BigInteger echoBigInteger(BigInteger value) {
        return value;
    }

    @Override
    public String describeBigInteger(BigInteger value) {
        return String.valueOf(value);
    }

    @Override
    public Date echoDate(Date value) {
        return value;
    }

    @Override
    public String describeDate(Date value) {
        return value == null ? "null" : value.toInstant().toString();
    }

    @Override
    public LocalDate echoLocalDate(LocalDate value) {
        return value;
    }

    @Override
    public LocalDateTime echoLocalDateTime(LocalDateTime value) {
        return value;
    }

    @Override
    public LocalTime echoLocalTime(LocalTime value) {
        return value;
    }

    @Override
    public Instant echoInstant(Instant value) {
        return value;
    }

    @Override
    public Duration echoDuration(Duration value) {
        return value;
    }

    @Override
    public ZonedDateTime echoZoned(ZonedDateTime value) {
        return value;
    }

    @Override
    public OffsetDateTime echoOffset(OffsetDateTime value) {
        return value;
    }

    @Override
    public Period echoPeriod(Period value) {
        return value;
    }

    @Override
    public String describeTime(Object value) {
        return value == null ? "null" : value.getClass().getName() + " " + value;
    }

    @Override
    public Color echoColor(Color value) {
        return value;
    }

    @Override
    public Color nextColor(Color value) {
        Color[] all = Color.values();
        return all[(value.ordinal() + 1) % all.length];
    }

    @Override
    public Invoice nextInvoice(Invoice invoice) {
        return invoice == null ? null : invoice.next();
    }
}
