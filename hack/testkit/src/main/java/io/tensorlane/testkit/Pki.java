package io.tensorlane.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/** Key material for a local control plane: the service-account signing key pair and a random admin token. */
final class Pki {
    private static final SecureRandom RANDOM = new SecureRandom();

    private Pki() {}

    /** Writes an RSA key pair as PEM: {@code privateKey} (PKCS#8) and {@code publicKey} (X.509 SubjectPublicKeyInfo). */
    static void writeServiceAccountKeys(Path privateKey, Path publicKey) throws IOException {
        try {
            KeyPairGenerator gen = KeyPairGenerator.getInstance("RSA");
            gen.initialize(2048, RANDOM);
            KeyPair kp = gen.generateKeyPair();
            writePem(privateKey, "PRIVATE KEY", kp.getPrivate().getEncoded());
            writePem(publicKey, "PUBLIC KEY", kp.getPublic().getEncoded());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("RSA key generation is not available in this JVM", e);
        }
    }

    static String randomToken() {
        byte[] b = new byte[24];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    private static void writePem(Path file, String type, byte[] der) throws IOException {
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der);
        Files.writeString(file, "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n");
    }
}
