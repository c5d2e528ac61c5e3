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

/**
 * Java value types that Dubbo's hessian serializes in its own ways (BigDecimal as a string field,
 * java.time through hessian-lite's *Handle classes, enums by name). Each echo method returns what it
 * received; the {@code describe*} methods return Java's own {@code toString()} of it, so a test can
 * check what the provider really got, not only that the bytes came back.
 */
public interface JavaTypesService {

    BigDecimal echoDecimal(BigDecimal value);

    /** {@code value.toString()} and its scale, e.g. "12.340 scale=3". */
    String describeDecimal(BigDecimal value);

    BigInteger echoBigInteger(BigInteger value);

    String describeBigInteger(BigInteger value);

    Date echoDate(Date value);

    /** {@code value.toInstant().toString()}. */
    String describeDate(Date value);

    LocalDate echoLocalDate(LocalDate value);

    LocalDateTime echoLocalDateTime(LocalDateTime value);

    LocalTime echoLocalTime(LocalTime value);

    Instant echoInstant(Instant value);

    Duration echoDuration(Duration value);

    ZonedDateTime echoZoned(ZonedDateTime value);

    OffsetDateTime echoOffset(OffsetDateTime value);

    Period echoPeriod(Period value);

    /** {@code value.toString()} of any of the java.time values above (ISO-8601). */
    String describeTime(Object value);

    Color echoColor(Color value);

    /** The constant after {@code value}, wrapping around: RED gives GREEN. */
    Color nextColor(Color value);

    Invoice nextInvoice(Invoice invoice);
}
