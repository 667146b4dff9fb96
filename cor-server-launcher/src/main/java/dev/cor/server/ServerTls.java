package dev.cor.server;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.List;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * The broker port's TLS - {@code --https --key FILE --cert FILE}, Orion-LD's flags: the PEM key
 * and chain read once at start ({@link PemFiles}) into the {@link SSLContext} the HTTP server
 * is given (which speaks TLS 1.3 and 1.2 only). Main thread, at start.
 *
 * @param key  the PEM private key file
 * @param cert the PEM certificate chain file, the server's certificate first
 */
record ServerTls(Path key, Path cert) {

    /**
     * The TLS of the flags, or {@code null} without {@code --https}; a {@code --key} or
     * {@code --cert} without it, or {@code --https} without both, is a mistake.
     */
    static ServerTls of(boolean https, String key, String cert) {
        if (!https) {
            if (key != null || cert != null) {
                throw new IllegalArgumentException((key != null ? "--key" : "--cert") + " is only read with --https");
            }
            return null;
        }
        if (key == null || cert == null) {
            throw new IllegalArgumentException("--https takes --key FILE and --cert FILE (PEM)");
        }
        return new ServerTls(Path.of(key), Path.of(cert));
    }

    /** The server's context: the key and its chain; fails when they cannot be read or do not match. */
    SSLContext sslContext() {
        PrivateKey privateKey = PemFiles.privateKey(key);
        List<X509Certificate> chain = PemFiles.certificates(cert);
        checkPair(privateKey, chain.getFirst());
        try {
            char[] none = new char[0];
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry("server", privateKey, none, chain.toArray(new Certificate[0]));
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(store, none);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(kmf.getKeyManagers(), null, null);
            return context;
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new IllegalArgumentException("cannot use " + key + " with " + cert + ": " + e.getMessage(), e);
        }
    }

    /** The key signs what the certificate's public key verifies, or the start fails here, not at a client. */
    private void checkPair(PrivateKey privateKey, X509Certificate leaf) {
        String algorithm = switch (privateKey.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "Ed25519", "Ed448", "EdDSA" -> privateKey.getAlgorithm();
            default -> null;
        };
        if (algorithm == null) {
            return; // the handshake will tell
        }
        boolean match;
        try {
            byte[] probe = "cor-server key check".getBytes(StandardCharsets.US_ASCII);
            Signature s = Signature.getInstance(algorithm);
            s.initSign(privateKey);
            s.update(probe);
            byte[] signature = s.sign();
            Signature v = Signature.getInstance(algorithm);
            v.initVerify(leaf.getPublicKey());
            v.update(probe);
            match = v.verify(signature);
        } catch (GeneralSecurityException e) {
            match = false;
        }
        if (!match) {
            throw new IllegalArgumentException(key + " is not the key of the first certificate in " + cert + " ("
                    + leaf.getSubjectX500Principal().getName() + ")");
        }
    }
}
