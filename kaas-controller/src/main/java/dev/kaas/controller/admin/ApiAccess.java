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
    private ScheduledExecutorService reloader;

    public ApiAccess(ControllerConfig config, @ConfigProperty(name = "quarkus.http.host", defaultValue = "0.0.0.0") String httpHost) {
        this.config = config;
        this.httpHost = httpHost;
    }

    void onStart(@Observes StartupEvent ev) {
        Optional<String> file = config.rest().credentialsFile();
        if (file.isPresent()) {
            mode = Mode.CREDENTIALS;
            reload(Path.of(file.get()));
            reloader = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "kaas-rest-credentials");
                t.setDaemon(true);
                return t;
            });
            reloader.scheduleWithFixedDelay(() -> reload(Path.of(file.get())), RELOAD_SECONDS, RELOAD_SECONDS, TimeUnit.SECONDS);
        } else if (config.controller().metadata() == ControllerConfig.MetadataBinding.STANDALONE && loopback(httpHost)) {
            mode = Mode.OPEN;
        } else {
            mode = Mode.CLOSED;
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

    static boolean loopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    private void reload(Path file) {
        try {
            if (Files.size(file) > MAX_FILE_BYTES) {
                LOG.errorf("REST credentials file %s is larger than %d bytes: not read, the previous credentials stay", file, MAX_FILE_BYTES);
                return;
            }
            String text = Files.readString(file, StandardCharsets.UTF_8);
            if (text.equals(lastText)) {
                return;
            }
            ApiCredentials next = ApiCredentials.parse(text);
            next.problems.forEach(p -> LOG.warnf("REST credentials file %s: %s", file, p));
            if (next.isEmpty()) {
                LOG.warnf("REST credentials file %s names nobody: every call to /api/v1 gets 401", file);
            }
            credentials = next;
            lastText = text;
            LOG.infof("REST credentials read from %s", file);
        } catch (IOException | RuntimeException e) {
            LOG.errorf("REST credentials file %s could not be read (%s): the previous credentials stay", file, e.toString());
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
