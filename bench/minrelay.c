/* SPDX-License-Identifier: Apache-2.0
 *
 * minrelay: the smallest useful TCP byte relay, the baseline of
 * bench/relay.sh (issue 16: "a minimal epoll relay"). It listens on
 * 127.0.0.1:LISTEN_PORT, and for each accepted connection (one at a time)
 * connects to 127.0.0.1:TARGET_PORT and copies bytes both ways with one
 * epoll loop, nonblocking sockets, TCP_NODELAY on both, and a 256 KiB
 * buffer per direction (reading stops while a direction's buffer waits for
 * its writer: back-pressure as in a direct connection). No protocol
 * knowledge: what ddmon adds (JDWP framing, id remapping, DDM filtering)
 * is what the benchmark compares against it.
 *
 *   minrelay LISTEN_PORT TARGET_PORT [--once]
 * --once: exit after the first connection ends (for callgrind/strace runs).
 * Prints "minrelay ready" on stdout once it listens.
 */
#define _GNU_SOURCE 1
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF (256u * 1024u)

typedef struct {
    int from, to;
    char buf[BUF];
    size_t start, end; /* bytes read from `from`, not yet written to `to` */
    int eof;
} Dir;

static int tcp_socket(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0) {
        perror("minrelay: socket");
        exit(1);
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void set_nonblock(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static struct sockaddr_in loopback(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

/* Move what can move in @d; -1 when the direction is finished or broke. */
static int pump(Dir *d)
{
    for (;;) {
        if (d->start < d->end) {
            ssize_t w = write(d->to, d->buf + d->start, d->end - d->start);
            if (w < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -1;
            d->start += (size_t)w;
            if (d->start < d->end)
                return 0; /* partial: wait for EPOLLOUT */
            d->start = d->end = 0;
        }
        if (d->eof)
            return -1;
        ssize_t n = read(d->from, d->buf, BUF);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        if (n == 0) {
            d->eof = 1;
            return -1;
        }
        d->end = (size_t)n;
    }
}

static void serve(int client, int target_port)
{
    int vm = tcp_socket();
    struct sockaddr_in ta = loopback(target_port);
    if (connect(vm, (struct sockaddr *)&ta, sizeof ta) < 0) {
        perror("minrelay: connect");
        close(vm);
        close(client);
        return;
    }
    int one = 1;
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    static Dir up, down; /* 512 KiB: static, not on the stack */
    up.from = client, up.to = vm, up.start = up.end = 0, up.eof = 0;
    down.from = vm, down.to = client, down.start = down.end = 0, down.eof = 0;
    set_nonblock(client);
    set_nonblock(vm);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.fd = client};
    epoll_ctl(ep, EPOLL_CTL_ADD, client, &ev);
    ev.data.fd = vm;
    epoll_ctl(ep, EPOLL_CTL_ADD, vm, &ev);
    for (;;) {
        struct epoll_event evs[2];
        int n = epoll_wait(ep, evs, 2, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        /* Edge-triggered: either side's event may unblock either direction. */
        if (pump(&up) < 0 || pump(&down) < 0)
            break;
    }
    close(ep);
    close(vm);
    close(client);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: minrelay LISTEN_PORT TARGET_PORT [--once]\n");
        return 2;
    }
    int once = argc > 3 && !strcmp(argv[3], "--once");
    /* A side that closed while the other still sends (the JVM's event storm
     * after the client left) is EPIPE for pump(), not a SIGPIPE that kills
     * the relay between two connections. */
    signal(SIGPIPE, SIG_IGN);
    int ls = tcp_socket(), one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in la = loopback(atoi(argv[1]));
    if (bind(ls, (struct sockaddr *)&la, sizeof la) < 0 || listen(ls, 8) < 0) {
        perror("minrelay: listen");
        return 1;
    }
    printf("minrelay ready\n");
    fflush(stdout);
    do {
        int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR)
                continue;
            perror("minrelay: accept");
            return 1;
        }
        serve(c, atoi(argv[2]));
    } while (!once);
    close(ls);
    return 0;
}
