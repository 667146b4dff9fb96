package dev.cor.http;

/** The limits a server enforces on every input; set through {@link CorHttpServer.Builder}. */
record HttpLimits(int maxRequestLineBytes, int maxRequestTargetBytes, int maxHeaderBytes, int maxHeaderCount,
                  int maxBodyBytes, long headerTimeoutMs, long idleTimeoutMs, long writeTimeoutMs) {
}
