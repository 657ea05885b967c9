package dev.kaas.broker.auth;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A test certificate authority and the stores signed by it, made with the JDK's own
 * {@code keytool} (no certificate library needed): PKCS12 and JKS keystores, a PKCS12
 * truststore, and PEM files. Every run is bounded in time.
 */
public final class TestCerts {
    public static final String PASSWORD = "test-secret";

    private final Path dir;

    private TestCerts(Path dir) {
        this.dir = dir;
    }

    /** A new authority in {@code dir} ({@code ca.p12}, {@code truststore.p12} holding its certificate). */
    public static TestCerts authority(Path dir) throws Exception {
        Files.createDirectories(dir);
        TestCerts c = new TestCerts(dir);
        c.keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=kaas-test-ca",
                "-ext", "bc:c", "-validity", "2", "-keystore", c.path("ca.p12"), "-storetype", "PKCS12", "-storepass", PASSWORD);
        c.keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", c.path("ca.p12"), "-storepass", PASSWORD, "-file", c.path("ca.pem"));
        c.keytool("-importcert", "-noprompt", "-alias", "ca", "-file", c.path("ca.pem"), "-keystore", c.path("truststore.p12"),
                "-storetype", "PKCS12", "-storepass", PASSWORD);
        return c;
    }

    /**
     * A key pair signed by the authority, in {@code <name>.p12} (or {@code .jks}) with the chain,
     * subject alternative names localhost and 127.0.0.1.
     *
     * @param storeType PKCS12 or JKS
     */
    public Path issue(String name, String dname, String storeType) throws Exception {
        String store = path(name + (storeType.equals("JKS") ? ".jks" : ".p12"));
        Files.deleteIfExists(Path.of(store));
        keytool("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", dname, "-validity", "2",
                "-keystore", store, "-storetype", storeType, "-storepass", PASSWORD, "-keypass", PASSWORD);
        keytool("-certreq", "-alias", name, "-keystore", store, "-storepass", PASSWORD, "-file", path(name + ".csr"));
        keytool("-gencert", "-alias", "ca", "-keystore", path("ca.p12"), "-storepass", PASSWORD, "-infile", path(name + ".csr"),
                "-outfile", path(name + ".crt"), "-rfc", "-validity", "2", "-ext", "SAN=dns:localhost,ip:127.0.0.1");
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", path("ca.pem"), "-keystore", store, "-storepass", PASSWORD);
        keytool("-importcert", "-alias", name, "-file", path(name + ".crt"), "-keystore", store, "-storepass", PASSWORD,
                "-keypass", PASSWORD);
        return Path.of(store);
    }

    /** The key and chain of a PKCS12 store {@link #issue}d, as one PEM file (unencrypted PKCS#8 key first). */
    public Path pem(String name) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(dir.resolve(name + ".p12"))) {
            ks.load(in, PASSWORD.toCharArray());
        }
        Key key = ks.getKey(name, PASSWORD.toCharArray());
        List<String> blocks = new ArrayList<>();
        blocks.add(block("PRIVATE KEY", key.getEncoded()));
        for (Certificate c : ks.getCertificateChain(name)) {
            blocks.add(block("CERTIFICATE", c.getEncoded()));
        }
        Path out = dir.resolve(name + ".pem");
        Files.writeString(out, String.join("", blocks));
        return out;
    }

    public Path truststore() {
        return dir.resolve("truststore.p12");
    }

    public Path caPem() {
        return dir.resolve("ca.pem");
    }

    private static String block(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    private String path(String file) {
        return dir.resolve(file).toString();
    }

    private void keytool(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        // keytool is a short-lived JVM: C1 alone and the serial collector start it with less CPU.
        cmd.addAll(List.of("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"));
        cmd.addAll(List.of(args));
        Path log = Files.createTempFile(dir, "keytool", ".log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("keytool " + args[0] + " did not finish in 60 s");
        }
        if (p.exitValue() != 0) {
            throw new IOException("keytool " + String.join(" ", args) + " failed: " + Files.readString(log));
        }
        Files.delete(log);
    }
}
