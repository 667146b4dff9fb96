package dev.cor.ngsild.subscription;

import java.net.URI;

/**
 * An {@code mqtt://} or {@code mqtts://} notification endpoint, taken apart: the broker (host,
 * port - 1883 or 8883 by default - TLS or not), the user and password of its user information,
 * and the topic (the path without its leading slash, {@code null} when there is none). Notifications
 * to the same broker as the same user share a connection: {@link #key()}. It names itself
 * ({@link #toString()}) without its user information, so that a reason or a log line never shows
 * a password. Immutable.
 */
record MqttEndpoint(String scheme, String host, int port, String user, String password, String topic) {

    static MqttEndpoint parse(String uri) {
        URI u = URI.create(uri);
        boolean tls = "mqtts".equalsIgnoreCase(u.getScheme());
        int port = u.getPort() > 0 ? u.getPort() : tls ? 8883 : 1883;
        String user = null;
        String password = null;
        String info = u.getUserInfo();
        if (info != null) {
            int colon = info.indexOf(':');
            user = colon < 0 ? info : info.substring(0, colon);
            password = colon < 0 ? null : info.substring(colon + 1);
        }
        String path = u.getPath();
        String topic = path == null || path.length() <= 1 ? null : path.substring(1);
        return new MqttEndpoint(tls ? "mqtts" : "mqtt", u.getHost(), port, user, password, topic);
    }

    boolean tls() {
        return scheme.equals("mqtts");
    }

    /** The host as a URI writes it (an IPv6 address in brackets). */
    String hostForUri() {
        return host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    /** The connection notifications to this endpoint share: the broker and the credentials. */
    String key() {
        return scheme + "://" + hostForUri() + ":" + port + (user == null ? "" : "|" + user + ":" + password);
    }

    @Override
    public String toString() {
        return scheme + "://" + hostForUri() + ":" + port;
    }
}
