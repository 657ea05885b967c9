package dev.kaas.controller.admin;

import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Optional;
import java.util.Set;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Authentication of every {@code /api/} call, before its resource is matched (an unknown path
 * reads as 401, not 404, to a caller without credentials), and the JSON error body of every
 * failure. Runs on the event loop: it reads only what {@link ApiAccess} holds in memory.
 */
public class ApiFilters {
    private static final Logger LOG = Logger.getLogger(ApiFilters.class);
    private static final Set<String> READS = Set.of("GET", "HEAD", "OPTIONS");

    private final ApiAccess access;

    public ApiFilters(ApiAccess access) {
        this.access = access;
    }

    @ServerRequestFilter(preMatching = true, priority = Priorities.AUTHENTICATION)
    public Response authenticate(ContainerRequestContext ctx) {
        String path = ctx.getUriInfo().getPath();
        if (!path.startsWith("/api/")) {
            return null;
        }
        Optional<ApiCredentials.Role> role = access.authenticate(ctx.getHeaderString("Authorization"));
        if (role.isEmpty()) {
            String why = access.mode() == ApiAccess.Mode.CLOSED
                    ? "This controller has no REST credentials (kaas.rest.credentials-file) and is not bound to loopback in standalone mode."
                    : "A bearer token or basic credentials from the REST credentials file are required.";
            return Response.status(Response.Status.UNAUTHORIZED).entity(new ApiError("UNAUTHORIZED", why)).type(MediaType.APPLICATION_JSON)
                    .header("WWW-Authenticate", "Bearer realm=\"kaas\"")
                    .header("WWW-Authenticate", "Basic realm=\"kaas\", charset=\"UTF-8\"")
                    .build();
        }
        // HTTP/2 (a client's h2c upgrade) has no Host header: its :authority is the request URI's.
        String host = ctx.getHeaderString("Host");
        if (host == null) {
            host = ctx.getUriInfo().getRequestUri().getRawAuthority();
        }
        if (access.mode() == ApiAccess.Mode.OPEN && !ApiAccess.loopbackHost(host)) {
            // Open only to local processes: a page whose name was re-bound to 127.0.0.1 (DNS rebinding) is not one.
            return error(Response.Status.FORBIDDEN, "FORBIDDEN", "Without credentials this API answers only requests addressed to a loopback name.");
        }
        boolean write = !READS.contains(ctx.getMethod());
        if (write && crossSite(ctx.getHeaderString("Origin"), ctx.getHeaderString("Sec-Fetch-Site"), host)) {
            // A browser sends a bodiless cross-site POST without asking first, with whatever credentials it holds.
            return error(Response.Status.FORBIDDEN, "FORBIDDEN", "Changes are not accepted from a page of another site.");
        }
        if (role.get() != ApiCredentials.Role.ADMIN && write) {
            return error(Response.Status.FORBIDDEN, "FORBIDDEN", "These credentials are read-only.");
        }
        return null;
    }

    /** A browser request made by another site's page: scripts and tools send neither header, or their own site's. */
    static boolean crossSite(String origin, String fetchSite, String host) {
        if (fetchSite != null && (fetchSite.equalsIgnoreCase("cross-site") || fetchSite.equalsIgnoreCase("same-site"))) {
            return true;
        }
        if (origin == null || origin.isEmpty()) {
            return false;
        }
        try {
            java.net.URI o = java.net.URI.create(origin);
            String authority = o.getRawAuthority();
            return authority == null || host == null || !authority.equalsIgnoreCase(host);
        } catch (IllegalArgumentException e) {
            return true;
        }
    }

    /** A body whose JSON does not fit the endpoint's shape (a string where a number goes): Jackson's own exception, not a WebApplicationException. */
    @ServerExceptionMapper
    public Response badJson(com.fasterxml.jackson.core.JsonProcessingException e) {
        return error(Response.Status.BAD_REQUEST, "BAD_REQUEST", "The request body is not what this endpoint reads.");
    }

    /** As {@link #badJson}: named too, since Quarkus maps this subtype itself (an empty 400) unless an application mapper names it. */
    @ServerExceptionMapper
    public Response mismatchedJson(com.fasterxml.jackson.databind.exc.MismatchedInputException e) {
        return badJson(e);
    }

    @ServerExceptionMapper
    public Response apiError(ApiException e) {
        return error(e.status, e.code, e.getMessage());
    }

    /** Everything the framework refuses (no such path, a body that is not JSON, a wrong method) gets the same body shape. */
    @ServerExceptionMapper
    public Response webError(WebApplicationException e) {
        int status = e.getResponse().getStatus();
        Response.Status known = Response.Status.fromStatusCode(status);
        String code = known == null ? "HTTP_" + status : known.name();
        String message = status == 404 ? "No such resource." : status == 400 ? "The request body is not what this endpoint reads."
                : known == null ? "HTTP " + status : known.getReasonPhrase();
        return Response.fromResponse(e.getResponse()).entity(new ApiError(code, message)).type(MediaType.APPLICATION_JSON).build();
    }

    /** Never a stack trace to the caller: the log has it. */
    @ServerExceptionMapper
    public Response unexpected(RuntimeException e) {
        LOG.errorf(e, "REST call failed");
        return error(Response.Status.INTERNAL_SERVER_ERROR, "INTERNAL_ERROR", "The controller could not complete the call; its log has why.");
    }

    static Response error(Response.Status status, String code, String message) {
        return Response.status(status).entity(new ApiError(code, message)).type(MediaType.APPLICATION_JSON).build();
    }
}
