/** An HTTP/1.1 server (and HTTPS) on cor's loops: {@code CorHttpServer}. */
module dev.cor.http {
    requires transitive dev.cor.rest;

    exports dev.cor.http;
}
