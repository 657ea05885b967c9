package dev.kaas.controller.admin;

import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * The body of every REST failure. {@code code}: the Kafka error name where the Kafka API would
 * have answered with one (TOPIC_ALREADY_EXISTS, INVALID_CONFIG, NOT_CONTROLLER, ...), else an
 * HTTP status name (UNAUTHORIZED, NOT_FOUND, ...).
 */
@Schema(description = "What went wrong: a Kafka error name or an HTTP status name, and a message for people.")
public record ApiError(String code, String message) {
}
