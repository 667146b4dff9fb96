package dev.cor.rest.client;

/** Where a connection goes: what a pooled connection may be reused for. */
record Origin(String scheme, String host, int port) {
    @Override
    public String toString() {
        return scheme + "://" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
