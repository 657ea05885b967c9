package dev.kaas.controller.admin;

import jakarta.ws.rs.core.Response;

/** A refusal with its HTTP status and {@link ApiError} code; answered by {@link ApiFilters}. */
final class ApiException extends RuntimeException {
    final Response.Status status;
    final String code;

    ApiException(Response.Status status, String code, String message) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
    }
}
