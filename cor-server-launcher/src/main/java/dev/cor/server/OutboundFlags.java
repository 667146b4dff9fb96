package dev.cor.server;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Enumeration;
import java.util.List;
import java.util.function.Consumer;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

import dev.cor.ngsild.CorNgsild;
import dev.cor.rest.OutboundPolicy;

/**
 * The flags of the broker's outbound connections - context downloads, notifications (HTTP and
 * MQTT), forwards to context sources: {@code --trustStore FILE} (a PEM bundle of CA certificates
 * or a PKCS12 store, its CAs added to the JDK's default trust, with
 * {@code --trustStorePassword} for a store whose certificates are encrypted), and
 * {@code --outboundDeny}/{@code --outboundAllow} (CIDR ranges: an address is refused when it is in
 * a deny range and in no allow range, as a firewall's rules read). Parsed with the other flags on
 * the main thread; the trust store is read by {@link #settings} at start.
 *
 * @param trustStore         {@code --trustStore}, or {@code null}: the JDK's default trust alone
 * @param trustStorePassword {@code --trustStorePassword}, or {@code null}
 * @param deny               {@code --outboundDeny}'s ranges
 * @param allow              {@code --outboundAllow}'s ranges
 */
record OutboundFlags(String trustStore, String trustStorePassword, List<String> deny, List<String> allow) {
    static final OutboundFlags NONE = new OutboundFlags(null, null, List.of(), List.of());

    /** The flags' lines of {@code --help}, indented as the others. */
    static final String USAGE = """
              --trustStore FILE   CAs the broker trusts when it connects to https:// and mqtts:// peers, added
                                  to the JDK's: a PEM bundle, or a PKCS12 store (host names always verified)
              --trustStorePassword P  the PKCS12 store's password, if its certificates are encrypted
              --outboundDeny CIDRS  comma-separated ranges (10.0.0.0/8,fc00::/7) the broker never connects to:
                                  contexts, redirects, notifications, context sources (default: none)
              --outboundAllow CIDRS  exceptions to --outboundDeny: an address is refused when it is in a deny
                                  range and in no allow range""".indent(2);

    /** Whether {@code flag} is one of these. */
    static boolean takes(String flag) {
        return switch (flag) {
            case "--trustStore", "--trustStorePassword", "--outboundDeny", "--outboundAllow" -> true;
            default -> false;
        };
    }

    /** These flags with {@code flag} set to {@code value} (given again, the last one counts). */
    OutboundFlags with(String flag, String value) {
        return switch (flag) {
            case "--trustStore" -> new OutboundFlags(nonBlank(flag, value), trustStorePassword, deny, allow);
            case "--trustStorePassword" -> new OutboundFlags(trustStore, value, deny, allow);
            case "--outboundDeny" -> new OutboundFlags(trustStore, trustStorePassword, ranges(flag, value), allow);
            case "--outboundAllow" -> new OutboundFlags(trustStore, trustStorePassword, deny, ranges(flag, value));
            default -> throw new IllegalArgumentException("unknown option " + flag);
        };
    }

    /** The flags once all are read: what one needs of another. */
    OutboundFlags checked() {
        if (!allow.isEmpty() && deny.isEmpty()) {
            // alone it would change nothing: an operator who wrote it expected a list of what is allowed
            throw new IllegalArgumentException("--outboundAllow makes exceptions to --outboundDeny and needs it "
                    + "(to allow only some ranges: --outboundDeny 0.0.0.0/0,::/0 --outboundAllow RANGES)");
        }
        if (trustStorePassword != null && trustStore == null) {
            throw new IllegalArgumentException("--trustStorePassword goes with --trustStore");
        }
        return this;
    }

    /**
     * What these flags ask of the broker - the policy, and the trust when a store is named - as
     * settings of its builder. The store is read here, at once: a bad one fails the start before
     * anything opens.
     */
    Consumer<CorNgsild.Builder> settings() {
        OutboundPolicy policy = deny.isEmpty() ? OutboundPolicy.ALLOW_ALL : OutboundPolicy.ranges(deny, allow);
        SSLContext tls = trustStore == null ? null : sslContext();
        return broker -> {
            broker.outboundPolicy(policy);
            if (tls != null) {
                broker.sslContext(tls);
            }
        };
    }

    /** The context the broker's clients connect with: {@link #trustManager}'s trust. */
    SSLContext sslContext() {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, new TrustManager[] {trustManager()}, null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("--trustStore " + trustStore + ": cannot make a TLS context: " + e.getMessage(), e);
        }
    }

    /**
     * The JDK's default CAs and the store's in one PKIX trust manager (the JDK's own): every
     * check - the chain, validity, the host name the client's engine asks for - as the JDK makes it.
     */
    X509TrustManager trustManager() {
        List<X509Certificate> added = readStore(Path.of(trustStore), trustStorePassword);
        try {
            KeyStore all = KeyStore.getInstance("PKCS12");
            all.load(null, null);
            int n = 0;
            for (X509Certificate c : jdkDefaultCas()) {
                all.setCertificateEntry("jdk-" + n++, c);
            }
            for (X509Certificate c : added) {
                all.setCertificateEntry("added-" + n++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(all);
            return x509(tmf);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("--trustStore " + trustStore + ": cannot make a trust of it: " + e.getMessage(), e);
        }
    }

    private static X509TrustManager x509(TrustManagerFactory tmf) throws GeneralSecurityException {
        for (TrustManager tm : tmf.getTrustManagers()) {
            if (tm instanceof X509TrustManager x) {
                return x;
            }
        }
        throw new GeneralSecurityException("no X.509 trust manager in this JDK");
    }

    /** The CAs the JDK trusts by default (its cacerts, or javax.net.ssl.trustStore when set). */
    private static List<X509Certificate> jdkDefaultCas() throws GeneralSecurityException {
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init((KeyStore) null);
        return Arrays.asList(x509(tmf).getAcceptedIssuers());
    }

    /** The certificates of a PEM bundle, or of a PKCS12 store's certificate entries; at least one. */
    static List<X509Certificate> readStore(Path file, String password) {
        if (isPem(file)) {
            return PemFiles.certificates(file);
        }
        List<X509Certificate> out = new ArrayList<>();
        try (InputStream in = Files.newInputStream(file)) {
            if (Files.size(file) > PemFiles.MAX_FILE_BYTES) {
                throw new IllegalArgumentException("--trustStore " + file + " is larger than " + PemFiles.MAX_FILE_BYTES + " bytes");
            }
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, password == null ? null : password.toCharArray());
            for (Enumeration<String> aliases = ks.aliases(); aliases.hasMoreElements();) {
                String alias = aliases.nextElement();
                Certificate c = ks.isCertificateEntry(alias) ? ks.getCertificate(alias) : null;
                if (c instanceof X509Certificate x) {
                    out.add(x);
                }
            }
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("--trustStore " + file + " is neither a PEM bundle nor a PKCS12 store this"
                    + " JDK reads" + (password == null ? " without a password (--trustStorePassword)" : " with its password")
                    + ": " + e.getMessage(), e);
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("--trustStore " + file + " holds no trusted certificate entry"
                    + (password == null ? " readable without a password (--trustStorePassword)" : ""));
        }
        return out;
    }

    private static boolean isPem(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            String head = new String(in.readNBytes(4096), StandardCharsets.US_ASCII);
            return head.contains("-----BEGIN ");
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read --trustStore " + file + ": " + e.getMessage(), e);
        }
    }

    private static List<String> ranges(String flag, String value) {
        List<String> out = new ArrayList<>();
        for (String r : value.split(",")) {
            if (!r.isBlank()) {
                out.add(r.strip());
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(flag + " takes comma-separated CIDR ranges, e.g. 10.0.0.0/8,fc00::/7");
        }
        try {
            OutboundPolicy.ranges(out, List.of()); // each checked now, so a mistake names the flag
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + ": " + e.getMessage(), e);
        }
        return List.copyOf(out);
    }

    private static String nonBlank(String flag, String value) {
        if (value.isBlank()) {
            throw new IllegalArgumentException(flag + " takes a file, not an empty string");
        }
        return value;
    }
}
