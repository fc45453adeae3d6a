package dev.atrium.resources.internal;

import jakarta.persistence.AttributeConverter;
import jakarta.persistence.Converter;
import java.sql.Timestamp;
import java.time.Instant;

/** {@code Instant} ↔ {@code timestamptz}: EclipseLink 4.0.9 would otherwise serialise an Instant into a bytea. */
@Converter(autoApply = true)
public class InstantColumn implements AttributeConverter<Instant, Timestamp> {

    @Override
    public Timestamp convertToDatabaseColumn(Instant value) {
        return value == null ? null : Timestamp.from(value);
    }

    @Override
    public Instant convertToEntityAttribute(Timestamp value) {
        return value == null ? null : value.toInstant();
    }
}
