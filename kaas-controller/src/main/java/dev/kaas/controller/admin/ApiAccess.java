package dev.kaas.controller.admin;

import dev.kaas.controller.config.ControllerConfig;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Whether a REST call may proceed: open (no credentials needed) only for a standalone controller
 * whose HTTP port is bound to loopback with no credentials file; otherwise the caller must present
 * a credential from {@code kaas.rest.credentials-file}, which is re-read every
 * {@link #RELOAD_SECONDS} on a thread of its own (a mounted Kubernetes Secret is rotated in
 * place). Requests are checked against what is in memory: no file access on a request.
 */
@ApplicationScoped
public class ApiAccess {
    private static final Logger LOG = Logger.getLogger(ApiAccess.class);
    static final long RELOAD_SECONDS = 5;
    /** A credentials file larger than this is not read: a bound on what is parsed. */
    static final long MAX_FILE_BYTES = 1 << 20;

    enum Mode {
        /** Loopback standalone without credentials: every caller is an admin. */
        OPEN,
        /** Credentials from the file. */
        CREDENTIALS,
        /** Reachable from other machines but no credentials file: every call gets 401. */
        CLOSED
    }

    private final ControllerConfig config;
    private final String httpHost;
    private volatile Mode mode = Mode.CLOSED;
    private volatile ApiCredentials credentials = ApiCredentials.parse("");
    private volatile String lastText;
    private String lastComplaint;
    private ScheduledExecutorService reloader;

    public ApiAccess(ControllerConfig config, @ConfigProperty(name = "quarkus.http.host", defaultValue = "0.0.0.0") String httpHost) {
        this.config = config;
        this.httpHost = httpHost;
    }

    void onStart(@Observes StartupEvent ev) {
        Optional<String> file = config.rest().credentialsFile();
        mode = decide(file.isPresent(), config.controller().metadata(), httpHost);
        if (mode == Mode.CREDENTIALS) {
            reload(Path.of(file.get()));
            reloader = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "kaas-rest-credentials");
                t.setDaemon(true);
                return t;
            });
            reloader.scheduleWithFixedDelay(() -> reload(Path.of(file.get())), RELOAD_SECONDS, RELOAD_SECONDS, TimeUnit.SECONDS);
        } else if (mode == Mode.CLOSED) {
            LOG.warnf("the REST admin API (/api/v1) refuses every call: the HTTP port is bound to %s%s, and without"
                    + " kaas.rest.credentials-file it is open only on loopback in standalone mode", httpHost,
                    config.controller().metadata() == ControllerConfig.MetadataBinding.STANDALONE ? "" : " in Kubernetes mode");
        }
    }

    void onStop(@Observes ShutdownEvent ev) {
        if (reloader != null) {
            reloader.shutdownNow();
        }
    }

    /** A Host header naming a loopback address or localhost (any port); no DNS lookup. */
    static boolean loopbackHost(String hostHeader) {
        if (hostHeader == null) {
            return false;
        }
        String h = hostHeader.strip().toLowerCase(java.util.Locale.ROOT);
        if (h.startsWith("[")) {
            int end = h.indexOf(']');
            return end > 0 && h.substring(1, end).equals("::1");
        }
        int colon = h.indexOf(':');
        String name = colon < 0 ? h : h.substring(0, colon);
        return name.equals("localhost") || name.matches("127(\\.\\d{1,3}){3}");
    }

    /** The mode a controller's settings give: see the class comment. */
    static Mode decide(boolean credentialsFile, ControllerConfig.MetadataBinding metadata, String httpHost) {
        if (credentialsFile) {
            return Mode.CREDENTIALS;
        }
        return metadata == ControllerConfig.MetadataBinding.STANDALONE && loopback(httpHost) ? Mode.OPEN : Mode.CLOSED;
    }

    static boolean loopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    private void reload(Path file) {
        try {
            String text;
            if (!Files.exists(file)) {
                // An optional Secret not created yet: nobody, until it appears.
                text = "";
            } else if (Files.size(file) > MAX_FILE_BYTES) {
                complain("REST credentials file " + file + " is larger than " + MAX_FILE_BYTES + " bytes: not read, the previous credentials stay");
                return;
            } else {
                text = Files.readString(file, StandardCharsets.UTF_8);
            }
            if (text.equals(lastText)) {
                return;
            }
            lastComplaint = null;
            ApiCredentials next = ApiCredentials.parse(text);
            next.problems.forEach(p -> LOG.warnf("REST credentials file %s: %s", file, p));
            if (next.isEmpty()) {
                LOG.warnf("REST credentials file %s %s: every call to /api/v1 gets 401", file, Files.exists(file) ? "names nobody" : "does not exist");
            }
            credentials = next;
            lastText = text;
            LOG.infof("REST credentials read from %s", file);
        } catch (IOException | RuntimeException e) {
            complain("REST credentials file " + file + " could not be read (" + e + "): the previous credentials stay");
        }
    }

    /** Said once, not every {@link #RELOAD_SECONDS}, until the file reads again. */
    private void complain(String message) {
        if (!message.equals(lastComplaint)) {
            lastComplaint = message;
            LOG.error(message);
        }
    }

    Mode mode() {
        return mode;
    }

    /** The caller's role, empty when the call must be refused with 401. */
    Optional<ApiCredentials.Role> authenticate(String authorization) {
        return switch (mode) {
            case OPEN -> Optional.of(ApiCredentials.Role.ADMIN);
            case CLOSED -> Optional.empty();
            case CREDENTIALS -> credentials.authenticate(authorization);
        };
    }
}
