package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.logging.Level;

import dev.cor.ngsild.store.durable.FsyncPolicy;

import org.junit.jupiter.api.Test;

/** The launcher's flags, parsed directly: every flag, the defaults, and each value refused with its reason. */
class ServerOptionsTest {

    private static String refused(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> ServerOptions.parse(args), String.join(" ", args))
                .getMessage();
    }

    @Test
    void noFlagsGiveTheDefaultsOrionLdUsersExpect() {
        ServerOptions o = ServerOptions.parse(new String[0]);
        assertEquals("0.0.0.0", o.host());
        assertEquals(1026, o.port());
        assertEquals(-1, o.corPort(), "cor:// is off unless asked for");
        assertEquals(Runtime.getRuntime().availableProcessors(), o.httpLoops());
        assertEquals(1024, o.coroutines());
        assertEquals(32, o.workers());
        assertEquals(0, o.coStackBytes(), "the JVM's default stack");
        assertEquals(5_000, o.contextTimeout());
        assertEquals(5_000, o.notificationTimeout());
        assertEquals(1024, o.notificationQueue());
        assertEquals(5_000, o.forwardTimeout());
        assertNull(o.brokerId(), "a random one per start");
        assertEquals(1024 * 1024, o.maxBodyBytes());
        assertEquals("info", o.logLevel());
        assertEquals(Level.INFO, o.julLevel());
        assertEquals("durable", o.store(), "./cor run keeps what it acknowledged");
        assertTrue(o.durable());
        assertEquals("./cor-data", o.dataDir());
        assertEquals(FsyncPolicy.always(), o.fsync());
        assertEquals(64L * 1024 * 1024, o.snapshotEvery());
        assertEquals(null, o.checkData());
        assertFalse(o.help());
    }

    @Test
    void httpsWithACorPortServesCorsWithTheSameKey() {
        ServerOptions o = ServerOptions.parse(new String[] {"--https", "--key", "k.pem", "--cert", "c.pem", "--corPort", "0"});
        assertEquals(0, o.corPort());
        assertEquals(java.nio.file.Path.of("k.pem"), o.tls().key(), "one key for both ports");
    }

    @Test
    void everyFlagIsParsed() {
        ServerOptions o = ServerOptions.parse(new String[] {"--host", "127.0.0.1", "--port", "0", "--corPort", "9090",
            "--httpLoops", "3", "--coroutines", "0", "--workers", "7", "--coStack", "512k", "--contextTimeout", "250",
            "--notificationTimeout", "750", "--notificationQueue", "16", "--forwardTimeout", "1500", "--brokerId", "broker-A",
            "--maxBody", "8m", "--logLevel", "debug", "--store", "memory", "--dataDir", "/var/lib/cor", "--fsync",
            "interval=10", "--snapshotEvery", "256m"});
        assertEquals("127.0.0.1", o.host());
        assertEquals(0, o.port());
        assertEquals(9090, o.corPort());
        assertEquals(3, o.httpLoops());
        assertEquals(0, o.coroutines(), "0 turns coroutines off");
        assertEquals(7, o.workers());
        assertEquals(512 * 1024, o.coStackBytes());
        assertEquals(250, o.contextTimeout());
        assertEquals(750, o.notificationTimeout());
        assertEquals(16, o.notificationQueue());
        assertEquals(1500, o.forwardTimeout());
        assertEquals("broker-A", o.brokerId());
        assertThrows(IllegalArgumentException.class, () -> ServerOptions.parse(new String[] {"--brokerId", "a,b"}),
                "a comma would split its Via entry");
        assertEquals(8 * 1024 * 1024, o.maxBodyBytes());
        assertEquals("debug", o.logLevel());
        assertEquals(Level.FINE, o.julLevel());
        assertEquals("memory", o.store());
        assertFalse(o.durable());
        assertEquals("/var/lib/cor", o.dataDir());
        assertEquals(FsyncPolicy.interval(10), o.fsync());
        assertEquals(256L * 1024 * 1024, o.snapshotEvery());
        assertEquals(FsyncPolicy.off(), ServerOptions.parse(new String[] {"--fsync", "off"}).fsync());
        assertEquals("/tmp/x", ServerOptions.parse(new String[] {"--check-data", "/tmp/x"}).checkData());
        assertTrue(ServerOptions.parse(new String[] {"--help"}).help());
        assertTrue(ServerOptions.parse(new String[] {"-h"}).help());
    }

    @Test
    void theHistoryIsOnAndKeptForEverUnlessTheTemporalFlagsSayOtherwise() {
        TemporalFlags none = ServerOptions.parse(new String[0]).temporal();
        assertTrue(none.on());
        assertEquals(new dev.cor.ngsild.store.TemporalRetention(Long.MAX_VALUE, 256L << 20), none.retention(256L << 20),
                "no age bound, the store's own byte bound");
        TemporalFlags t = ServerOptions.parse(new String[] {"--temporal", "off", "--temporalRetention", "30d",
            "--temporalMaxBytes", "50g"}).temporal();
        assertFalse(t.on());
        assertEquals(30L * 86_400_000L, t.maxAgeMs());
        assertEquals(50L << 30, t.retention(1).maxBytes());
        assertEquals(90L * 60_000L, ServerOptions.parse(new String[] {"--temporalRetention", "90m"}).temporal().maxAgeMs());
        assertEquals(12L * 3_600_000L, ServerOptions.parse(new String[] {"--temporalRetention", "12H"}).temporal().maxAgeMs());
        for (String[] bad : new String[][] {{"--temporal", "maybe"}, {"--temporalRetention", "30"}, {"--temporalRetention", "0d"},
            {"--temporalRetention", "2w"}, {"--temporalRetention", "99999999d"}, {"--temporalMaxBytes", "1k"}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ServerOptions.parse(bad));
            assertTrue(e.getMessage().startsWith(bad[0] + " takes "), e.getMessage());
        }
    }

    @Test
    void sizesTakeBytesOrKMGSuffixesInEitherCase() {
        assertEquals(2L * 1024 * 1024, ServerOptions.parse(new String[] {"--coStack", "2m"}).coStackBytes());
        assertEquals(2L * 1024 * 1024, ServerOptions.parse(new String[] {"--coStack", "2M"}).coStackBytes());
        assertEquals(1L << 30, ServerOptions.parse(new String[] {"--coStack", "1g"}).coStackBytes());
        assertEquals(65_536, ServerOptions.parse(new String[] {"--coStack", "65536"}).coStackBytes());
        assertEquals(100, ServerOptions.parse(new String[] {"--maxBody", "100"}).maxBodyBytes());
        assertEquals(1 << 30, ServerOptions.parse(new String[] {"--maxBody", "1g"}).maxBodyBytes());
    }

    @Test
    void everyLogLevelMapsToItsJavaUtilLoggingLevel() {
        String[] names = {"error", "warn", "info", "debug", "trace"};
        Level[] levels = {Level.SEVERE, Level.WARNING, Level.INFO, Level.FINE, Level.FINEST};
        for (int i = 0; i < names.length; i++) {
            assertEquals(levels[i], ServerOptions.parse(new String[] {"--logLevel", names[i]}).julLevel(), names[i]);
        }
        assertEquals("warn", ServerOptions.parse(new String[] {"--logLevel", "WARN"}).logLevel());
    }

    @Test
    void eachBadValueIsRefusedNamingTheFlagAndWhatItTakes() {
        assertEquals("unknown option --bogus", refused("--bogus"));
        assertEquals("unknown option 1026", refused("1026"), "a value without its flag");
        assertEquals("--port needs a value", refused("--port"));
        assertEquals("--port takes a number from 0 to 65535, not 65536", refused("--port", "65536"));
        assertEquals("--port takes a number from 0 to 65535, not x", refused("--port", "x"));
        assertEquals("--corPort takes a number from 0 to 65535, not -1", refused("--corPort", "-1"));
        assertEquals("--https takes --key FILE and --cert FILE (PEM)", refused("--https", "--key", "k.pem"));
        assertEquals("--key is only read with --https", refused("--key", "k.pem", "--cert", "c.pem"));
        assertEquals("--corsOrigin takes an origin (scheme://host[:port], no path) or __ALL, not 'https://a.example/x'",
                refused("--corsOrigin", "https://a.example/x"));
        assertEquals("--httpLoops takes a number from 1 to 1024, not 0", refused("--httpLoops", "0"));
        assertEquals("--coroutines takes a number from 0 to 1000000 or off, not -1", refused("--coroutines", "-1"));
        assertEquals(0, ServerOptions.parse(new String[] {"--coroutines", "off"}).coroutines(), "off: the worker hop for every request that waits");
        assertEquals("--workers takes a number from 1 to 4096, not 0", refused("--workers", "0"));
        assertEquals("--contextTimeout takes a number from 1 to 3600000, not 0", refused("--contextTimeout", "0"));
        assertEquals("--notificationQueue takes a number from 1 to 1000000, not 0", refused("--notificationQueue", "0"));
        assertEquals("--coStack takes a size from 64k to 1g (bytes, or with k, m or g), not 16k",
                refused("--coStack", "16k"));
        assertEquals("--coStack takes a size from 64k to 1g (bytes, or with k, m or g), not 2g", refused("--coStack", "2g"));
        assertEquals("--coStack takes a size from 64k to 1g (bytes, or with k, m or g), not lots",
                refused("--coStack", "lots"));
        assertEquals("--maxBody takes a size from 1 to 1g (bytes, or with k, m or g), not 1.5m", refused("--maxBody", "1.5m"));
        assertEquals("--maxBody takes a size from 1 to 1g (bytes, or with k, m or g), not 0", refused("--maxBody", "0"));
        assertEquals("--maxBody takes a size from 1 to 1g (bytes, or with k, m or g), not -1k", refused("--maxBody", "-1k"));
        assertEquals("--maxBody takes a size from 1 to 1g (bytes, or with k, m or g), not m", refused("--maxBody", "m"));
        assertEquals("--maxBody takes a size from 1 to 1g (bytes, or with k, m or g), not 99999999999999999999k",
                refused("--maxBody", "99999999999999999999k"));
        assertEquals("--logLevel takes one of error, warn, info, debug, trace, not verbose", refused("--logLevel", "verbose"));
        assertEquals("--host takes an address, not an empty string", refused("--host", ""));
        assertEquals("--store takes durable, memory or postgres, not disk", refused("--store", "disk"));
        assertEquals("--store postgres needs --db postgresql://USER@HOST:PORT/DB", refused("--store", "postgres"));
        assertEquals("--db: a postgresql://USER@HOST:PORT/DB URI is expected", refused("--db", "mysql://x"));
        assertEquals("--db and --dbPasswordFile go with --store postgres", refused("--db", "postgresql://u@h/d"));
        assertEquals("--dbPoolPerLoop takes a number from 1 to 1000, not 0", refused("--dbPoolPerLoop", "0"));
        String withPassword = refused("--store", "postgres", "--db", "postgresql://u:s3cr3t@h/d");
        assertFalse(withPassword.contains("s3cr3t"), "a password on the command line is refused without repeating it: " + withPassword);
        assertEquals("--dataDir takes a directory, not an empty string", refused("--dataDir", " "));
        assertEquals("--fsync takes always, off or interval=MS (1 to 3600000), not sometimes", refused("--fsync", "sometimes"));
        assertEquals("--fsync takes always, off or interval=MS (1 to 3600000), not interval=0", refused("--fsync", "interval=0"));
        assertEquals("--fsync takes always, off or interval=MS (1 to 3600000), not interval=x", refused("--fsync", "interval=x"));
        assertEquals("--snapshotEvery takes a size from 64k to 1024g (bytes, or with k, m or g), not 1k",
                refused("--snapshotEvery", "1k"));
    }

    @Test
    void importAndExportGoOneAtATimeWithTheDatabaseAndNeverFromTheEnvironment() {
        String[] db = {"--store", "postgres", "--db", "postgresql://u@h/d"};
        assertEquals(new DataTransfer("old-data", null), ServerOptions.parse(with(db, "--import", "old-data")).transfer());
        assertEquals(new DataTransfer(null, "new-data"), ServerOptions.parse(with(db, "--export", "new-data")).transfer());
        assertFalse(ServerOptions.parse(db).transfer().asked(), "a broker, unless asked for");
        assertEquals("--import goes with --store postgres --db URI: the database the data is copied into or out of",
                refused("--import", "cor-data"));
        assertEquals("--export goes with --store postgres --db URI: the database the data is copied into or out of",
                refused("--store", "memory", "--export", "x"));
        assertEquals("--import and --export go one at a time", refused(with(db, "--import", "a", "--export", "b")));
        assertEquals("--check-data goes without --import and --export", refused(with(db, "--import", "a", "--check-data", "a")));
        assertEquals("--import takes a directory, not an empty string", refused(with(db, "--import", "")));
        assertTrue(refused("--export").contains("needs a value"), refused("--export"));
        assertTrue(ServerOptions.USAGE.contains("\n  --import DIR ") && ServerOptions.USAGE.contains("\n  --export DIR "),
                "indented as the other flags");
        // a variable left set would make every start a one-shot
        String[] args = EnvironmentFlags.prepend(java.util.Map.of("COR_IMPORT", "x", "COR_EXPORT", "y"), new String[0]);
        assertEquals(0, args.length, String.join(" ", args));
    }

    private static String[] with(String[] first, String... more) {
        String[] out = java.util.Arrays.copyOf(first, first.length + more.length);
        System.arraycopy(more, 0, out, first.length, more.length);
        return out;
    }

    @Test
    void theAuthFlagsAreReadAndWhatOneNeedsOfAnotherIsChecked() {
        ServerOptions o = ServerOptions.parse(new String[] {"--tokens", "t.txt", "--jwtKey", "k.pem", "--jwtIssuer", "iss",
                "--jwtAudience", "aud", "--jwtTenantsClaim", "ngsild", "--corSecret", "s.txt"});
        assertEquals(new AuthFlags("t.txt", "k.pem", "iss", "aud", "ngsild", "s.txt"), o.auth());
        assertTrue(o.auth().enabled());
        assertEquals(AuthFlags.NONE, ServerOptions.parse(new String[0]).auth());
        assertFalse(AuthFlags.NONE.enabled(), "no authentication unless asked for");
        assertTrue(refused("--jwtKey", "k.pem", "--jwtIssuer", "iss").contains("--jwtAudience"));
        assertTrue(refused("--jwtIssuer", "iss").contains("go with --jwtKey"));
        assertTrue(refused("--tokens", "").contains("--tokens"));
        assertTrue(refused("--corSecret").contains("needs a value"));
        assertTrue(ServerOptions.USAGE.contains("\n  --tokens FILE "), "indented as the other flags");
        assertEquals(ServerOptions.USAGE.lastIndexOf("\n  --"), ServerOptions.USAGE.indexOf("\n  --help              this text\n"),
                "--help is the last flag");
    }

    @Test
    void theLogFlagsAreReadAndEachBadValueRefused() {
        assertEquals(LogFlags.DEFAULT, ServerOptions.parse(new String[0]).logs(), "no access log, text");
        assertEquals(new LogFlags("-", true), ServerOptions.parse(new String[] {"--accessLog", "-", "--logFormat", "json"}).logs());
        assertEquals(new LogFlags("/var/log/cor/access.log", false),
                ServerOptions.parse(new String[] {"--logFormat", "json", "--accessLog", "/var/log/cor/access.log",
                    "--logFormat", "text"}).logs(), "the last one wins");
        assertEquals("--logFormat takes text or json, not xml", refused("--logFormat", "xml"));
        assertEquals("--accessLog takes a file, or - for stdout, not an empty string", refused("--accessLog", " "));
        assertTrue(refused("--accessLog").contains("needs a value"));
        assertTrue(ServerOptions.USAGE.contains("\n  --accessLog FILE "), "indented as the other flags");
    }

    @Test
    void outboundFlagsAreParsedRangesCheckedAndTheLastOneGivenCounts() {
        ServerOptions o = ServerOptions.parse(new String[] {"--outboundDeny", "10.0.0.0/8, fc00::/7", "--outboundAllow",
            "10.1.0.0/16", "--trustStore", "/etc/cor/cas.pem", "--outboundDeny", "127.0.0.0/8,::1/128"});
        assertEquals(java.util.List.of("127.0.0.0/8", "::1/128"), o.outbound().deny(), "given again, the last one counts");
        assertEquals(java.util.List.of("10.1.0.0/16"), o.outbound().allow());
        assertEquals("/etc/cor/cas.pem", o.outbound().trustStore());
        assertEquals(OutboundFlags.NONE, ServerOptions.parse(new String[0]).outbound(), "default: allow all, the JDK's trust");
    }

    @Test
    void outboundFlagsAreRefusedWithTheirReason() {
        assertEquals("--outboundDeny: not a CIDR range: '10.0.0.0/33' (the prefix length takes 0 to 32)",
                refused("--outboundDeny", "127.0.0.0/8,10.0.0.0/33"));
        assertTrue(refused("--outboundAllow", "intranet.example").startsWith("--outboundAllow: not a CIDR range: 'intranet.example'"));
        assertTrue(refused("--outboundDeny", " , ").startsWith("--outboundDeny takes comma-separated CIDR ranges"));
        assertTrue(refused("--outboundAllow", "10.1.0.0/16").startsWith("--outboundAllow makes exceptions to --outboundDeny"));
        assertEquals("--trustStorePassword goes with --trustStore", refused("--trustStorePassword", "secret"));
        assertEquals("--trustStore takes a file, not an empty string", refused("--trustStore", " "));
    }
}
