/*
 * The floor of an open-loop latency measurement on this machine: an HTTP/1.1 server that does no
 * work at all. One epoll thread, keep-alive, every request (a head ending in CRLF CRLF, no body)
 * answered at once with one canned 200 the size of the broker's small entity. Whatever p99
 * corRequest measures against it is the generator's, the kernel's and the machine's, not a
 * server's: benchmarks/tail.sh compares the broker with it. C, not Java, so that no JVM (its
 * collector, its JIT, its safepoints) is on the server's side of the comparison.
 *   gcc -O2 -o floor floor.c && ./floor PORT      (listens on 127.0.0.1:PORT)
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static const char ANSWER[] =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 102\r\n\r\n"
    "{\"id\":\"urn:ngsi-ld:Bench:small\",\"type\":\"Bench\",\"name\":{\"type\":\"Property\",\"value\":\"a small entity...\"}}";

#define MAX_FDS 65536
static unsigned char state[MAX_FDS]; /* per connection: how much of CR LF CR LF was seen last */

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: floor PORT\n");
        return 2;
    }
    int one = 1;
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1])),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(listener, (struct sockaddr *) &address, sizeof address) != 0 || listen(listener, 1024) != 0) {
        perror("floor: bind");
        return 1;
    }
    int ep = epoll_create1(0);
    struct epoll_event e = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(ep, EPOLL_CTL_ADD, listener, &e);
    printf("listening on http://127.0.0.1:%s\n", argv[1]);
    fflush(stdout);
    static char buffer[65536];
    struct epoll_event ready[256];
    for (;;) {
        int n = epoll_wait(ep, ready, 256, -1);
        for (int i = 0; i < n; i++) {
            int fd = ready[i].data.fd;
            if (fd == listener) {
                int s;
                while ((s = accept4(listener, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (s >= MAX_FDS) {
                        close(s);
                        continue;
                    }
                    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    state[s] = 0;
                    struct epoll_event c = {.events = EPOLLIN, .data.fd = s};
                    epoll_ctl(ep, EPOLL_CTL_ADD, s, &c);
                }
                continue;
            }
            ssize_t got = read(fd, buffer, sizeof buffer);
            if (got <= 0) {
                close(fd);
                continue;
            }
            int heads = 0;
            for (ssize_t j = 0; j < got; j++) {
                unsigned char s = state[fd];
                char ch = buffer[j];
                if ((s == 0 || s == 2) && ch == '\r') s++;
                else if ((s == 1 || s == 3) && ch == '\n') { if (s == 3) { heads++; s = 0; } else s = 2; }
                else s = 0;
                state[fd] = s;
            }
            for (int j = 0; j < heads; j++) {
                if (write(fd, ANSWER, sizeof ANSWER - 1) < 0) break;
            }
        }
    }
}
