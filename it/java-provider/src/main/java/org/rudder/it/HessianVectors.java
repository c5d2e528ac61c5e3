package org.rudder.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.MonthDay;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.Period;
import java.time.Year;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.dubbo.common.serialize.hessian2.Hessian2FactoryManager;
import org.apache.dubbo.common.serialize.hessian2.Hessian2ObjectOutput;
import org.apache.dubbo.rpc.model.FrameworkModel;

/**
 * Prints, one per line, {@code name hex} for values written by Dubbo's own hessian2 serialization
 * (the same {@link Hessian2ObjectOutput} a provider answers with): rudder's codec tests compare
 * against these bytes. Run: {@code java -cp "$(cat target/classpath.txt):target/rudder-it-java-provider.jar"
 * org.rudder.it.HessianVectors}.
 */
public final class HessianVectors {

    private HessianVectors() {
    }

    public static void main(String[] args) throws IOException {
        Hessian2FactoryManager factories = new Hessian2FactoryManager(FrameworkModel.defaultModel());
        Map<String, Object> values = new LinkedHashMap<>();
        values.put("decimal", new BigDecimal("12.340"));
        values.put("decimal_negative_scale", new BigDecimal("1E+3"));
        values.put("decimal_tiny", new BigDecimal("-0.00000001"));
        values.put("big_integer", new BigInteger("-123456789012345678901234567890"));
        values.put("big_integer_zero", BigInteger.ZERO);
        values.put("date", Date.from(Instant.parse("2026-12-01T23:30:00.123Z")));
        values.put("local_date", LocalDate.of(2026, 12, 31));
        values.put("local_date_time", LocalDateTime.of(2026, 12, 1, 23, 30, 0));
        values.put("local_time", LocalTime.of(23, 30, 5, 120_000_000));
        values.put("instant", Instant.parse("2026-12-01T23:30:00.000000123Z"));
        values.put("duration", Duration.ofSeconds(-90, 5));
        values.put("zoned_date_time",
                ZonedDateTime.of(LocalDateTime.of(2026, 3, 29, 1, 30), ZoneId.of("Europe/Paris")));
        values.put("offset_date_time",
                OffsetDateTime.of(LocalDateTime.of(2026, 12, 1, 23, 30), ZoneOffset.ofHoursMinutes(5, 30)));
        values.put("offset_time", OffsetTime.of(LocalTime.of(8, 0), ZoneOffset.ofHours(-3)));
        values.put("period", Period.of(1, -2, 3));
        values.put("year", Year.of(2026));
        values.put("year_month", YearMonth.of(2026, 2));
        values.put("month_day", MonthDay.of(2, 29));
        values.put("zone_offset", ZoneOffset.ofHours(2));
        values.put("zone_id", ZoneId.of("Asia/Shanghai"));
        values.put("color", Color.BLUE);
        for (Map.Entry<String, Object> e : values.entrySet()) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            Hessian2ObjectOutput out = new Hessian2ObjectOutput(bytes, factories);
            out.writeObject(e.getValue());
            out.flushBuffer();
            StringBuilder hex = new StringBuilder();
            for (byte b : bytes.toByteArray()) {
                hex.append(String.format("%02x", b));
            }
            System.out.println(e.getKey() + " " + hex);
        }
    }
}
