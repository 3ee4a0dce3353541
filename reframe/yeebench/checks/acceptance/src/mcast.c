/* mcast: IP multicast from one node to the others (paper 003, test 13: multicast scalability).
 *
 * Rank 0 sends UDP datagrams to a multicast group; in each round the first R other ranks
 * (R = 1, 2, 4 ... all) have joined the group and count what arrives.  A round reports how
 * many datagrams each receiver got and the rate the slowest receiver saw, so delivery and
 * rate can be read against the number of receivers.  Ranks on the sender's host receive
 * through the kernel's multicast loopback, not the network: they are counted apart.
 *
 * The group (239.255.X.Y, administratively scoped) and port come from rank 0's pid and
 * clock unless given, so two runs on one network do not hear each other.
 *
 * Options: --iface NAME|ADDR (default: the first up, multicast-capable, non-loopback IPv4
 * interface), --count N datagrams per round (default 2000), --size B bytes (default 1024),
 * --group A.B.C.D, --port P, --timeout-ms T (how long a receiver waits after the sender's
 * last datagram, default 500).
 * A datagram the node received but its socket buffer had no room for is counted by the kernel
 * (UDP RcvbufErrors in /proc/net/snmp, per network namespace): the network delivered it, the receiving
 * process was not scheduled in time to read it.  `reached_min` is the worst receiver's datagrams read
 * plus the overflows its node counted meanwhile (-1 where the counter cannot be read, or counted more than
 * was sent: then other sockets of the node overflowed too).
 * Output (rank 0):
 *   round receivers <R> remote <r> sent <n> delivered_min <d> delivered_mean <m> mbps_min <x> reached_min <z>
 *   mcast: ranks <N> remote_receivers <r> group <g>:<port> iface <addr> VALID|INVALID
 *   mcast: SKIP <reason>          (no multicast interface, the kernel refused a socket option)
 * Exit 0 on VALID or SKIP, 1 when a datagram arrived corrupted, 2 on bad arguments.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <mpi.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REASON 512

typedef struct {
    char iface[64], group[32];
    long count, size, port, timeout_ms;
} options;

static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->count = 2000;
    o->size = 1024;
    o->timeout_ms = 500;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            return fprintf(stderr, "mcast: error: %s needs a value\n", a), 0;
        const char *v = argv[++i];
        if (!strcmp(a, "--iface") || !strcmp(a, "--group")) {
            char *dst = a[2] == 'i' ? o->iface : o->group;
            if (strlen(v) >= 32)
                return fprintf(stderr, "mcast: error: %s value too long\n", a), 0;
            strcpy(dst, v);
            continue;
        }
        char *end = NULL;
        long n = strtol(v, &end, 10);
        if (!*v || *end || n < 1)
            return fprintf(stderr, "mcast: error: %s must be a positive integer\n", a), 0;
        if (!strcmp(a, "--count")) o->count = n;
        else if (!strcmp(a, "--size")) o->size = n;
        else if (!strcmp(a, "--port")) o->port = n;
        else if (!strcmp(a, "--timeout-ms")) o->timeout_ms = n;
        else return fprintf(stderr, "mcast: error: unknown option %s\n", a), 0;
    }
    if (o->size < 16 || o->size > 65000)
        return fprintf(stderr, "mcast: error: --size must be 16..65000 bytes\n"), 0;
    if (o->port > 65535)
        return fprintf(stderr, "mcast: error: --port must be 1..65535\n"), 0;
    struct in_addr g;
    if (o->group[0] && (inet_pton(AF_INET, o->group, &g) != 1 || (ntohl(g.s_addr) >> 28) != 0xE))
        return fprintf(stderr, "mcast: error: --group %s is not an IPv4 multicast address\n", o->group), 0;
    return 1;
}

/* The IPv4 address of the interface to use, or a reason in `why`. */
static int pick_interface(const char *want, struct in_addr *addr, char *why)
{
    if (want[0] && inet_pton(AF_INET, want, addr) == 1)
        return 1;
    struct ifaddrs *all;
    if (getifaddrs(&all) != 0)
        return snprintf(why, REASON, "getifaddrs: %s", strerror(errno)), 0;
    int found = 0;
    for (struct ifaddrs *i = all; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        if (want[0] ? strcmp(i->ifa_name, want) != 0
                    : ((i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP) || !(i->ifa_flags & IFF_MULTICAST)))
            continue;
        *addr = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        found = 1;
    }
    freeifaddrs(all);
    if (!found)
        snprintf(why, REASON, want[0] ? "no IPv4 address on interface %s" :
                 "no up, multicast-capable, non-loopback IPv4 interface%s", want);
    return found;
}

/* The node's count of UDP datagrams dropped for a full socket receive buffer, or -1 when unreadable. */
static long rcvbuf_errors(void)
{
    FILE *f = fopen("/proc/net/snmp", "r");
    if (!f) return -1;
    char names[1024], values[1024];
    long found = -1;
    while (found < 0 && fgets(names, sizeof names, f) && fgets(values, sizeof values, f)) {
        if (strncmp(names, "Udp:", 4) || strncmp(values, "Udp:", 4)) continue;
        char *ns = NULL, *vs = NULL;
        char *n = strtok_r(names, " \n", &ns), *v = strtok_r(values, " \n", &vs);
        for (; n && v; n = strtok_r(NULL, " \n", &ns), v = strtok_r(NULL, " \n", &vs))
            if (!strcmp(n, "RcvbufErrors")) { found = atol(v); break; }
    }
    fclose(f);
    return found;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Payload: round, sequence number, then bytes derived from both (checked by receivers). */
static void fill(unsigned char *buf, long size, uint32_t round, uint32_t seq)
{
    memcpy(buf, &round, 4);
    memcpy(buf + 4, &seq, 4);
    for (long k = 8; k < size; ++k) buf[k] = (unsigned char)(seq * 31u + round * 7u + (uint32_t)k);
}

static int intact(const unsigned char *buf, long size, uint32_t round, uint32_t *seq)
{
    uint32_t r;
    memcpy(&r, buf, 4);
    memcpy(seq, buf + 4, 4);
    if (r != round) return -1;  /* a late datagram of an earlier round: not counted */
    for (long k = 8; k < size; ++k)
        if (buf[k] != (unsigned char)(*seq * 31u + round * 7u + (uint32_t)k)) return 0;
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    options o;
    int ok = parse_options(argc, argv, &o);
    if (!ok) {
        MPI_Finalize();
        return 2;
    }
    /* group and port from rank 0 unless given */
    unsigned seed[2] = {(unsigned)getpid(), (unsigned)(now() * 1e3)};
    MPI_Bcast(seed, 2, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
    if (!o.group[0])
        snprintf(o.group, sizeof o.group, "239.255.%u.%u", (seed[0] ^ seed[1]) % 250 + 1, seed[1] % 250 + 1);
    if (!o.port) o.port = 20000 + (seed[0] + seed[1]) % 20000;

    char why[REASON] = "", host[MPI_MAX_PROCESSOR_NAME], host0[MPI_MAX_PROCESSOR_NAME];
    int hlen;
    MPI_Get_processor_name(host, &hlen);
    memcpy(host0, host, sizeof host);
    MPI_Bcast(host0, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    const int remote = strcmp(host, host0) != 0;

    struct in_addr ifaddr, group;
    inet_pton(AF_INET, o.group, &group);
    int sock = -1;
    ok = pick_interface(o.iface, &ifaddr, why);
    if (ok && (sock = socket(AF_INET, SOCK_DGRAM, 0)) < 0)
        ok = 0, snprintf(why, REASON, "socket: %s", strerror(errno));
    if (ok && rank == 0) {
        unsigned char ttl = 1, loop = 1;
        if (setsockopt(sock, IPPROTO_IP, IP_MULTICAST_IF, &ifaddr, sizeof ifaddr) ||
            setsockopt(sock, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, 1) ||
            setsockopt(sock, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, 1))
            ok = 0, snprintf(why, REASON, "rank 0: multicast socket options: %s", strerror(errno));
    } else if (ok) {
        int one = 1, rcvbuf = 8 << 20;
        struct sockaddr_in bind_to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o.port), .sin_addr = group};
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
#ifdef IP_MULTICAST_ALL
        int all = 0;  /* only the groups this socket joined (Linux delivers any group a host joined) */
        setsockopt(sock, IPPROTO_IP, IP_MULTICAST_ALL, &all, sizeof all);
#endif
        if (bind(sock, (struct sockaddr *)&bind_to, sizeof bind_to))
            ok = 0, snprintf(why, REASON, "rank %d on %.64s: bind %s:%ld: %s", rank, host, o.group, o.port, strerror(errno));
    }
    /* agree: the first rank with a reason says why everybody skips */
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        int first = ok ? nranks : rank, who;
        MPI_Allreduce(&first, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Bcast(why, REASON, MPI_CHAR, who, MPI_COMM_WORLD);
        if (rank == 0) printf("mcast: SKIP %s\n", why);
        MPI_Finalize();
        return 0;
    }
    if (nranks < 2) {
        if (rank == 0) printf("mcast: SKIP one rank: no receiver (run one rank per node, 2 nodes or more)\n");
        MPI_Finalize();
        return 0;
    }
    int nremote = 0;
    MPI_Allreduce(&remote, &nremote, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    unsigned char *buf = malloc((size_t)o.size);
    int corrupt = 0;
    struct ip_mreq mreq = {.imr_multiaddr = group, .imr_interface = ifaddr};
    for (int receivers = 1, round = 0;; receivers = receivers * 2 < nranks - 1 ? receivers * 2 : nranks - 1, ++round) {
        const int member = rank >= 1 && rank <= receivers;
        char jerr[REASON] = "";
        if (member && setsockopt(sock, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof mreq) && errno != EADDRINUSE)
            snprintf(jerr, REASON, "rank %d on %.64s: IP_ADD_MEMBERSHIP %s: %s", rank, host, o.group, strerror(errno));
        int joined = !jerr[0], all_joined;
        MPI_Allreduce(&joined, &all_joined, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all_joined) {
            int first = joined ? nranks : rank, who;
            MPI_Allreduce(&first, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            MPI_Bcast(jerr, REASON, MPI_CHAR, who, MPI_COMM_WORLD);
            if (rank == 0) printf("mcast: SKIP %s\n", jerr);
            break;
        }
        usleep(200000);  /* let the bridge/switch learn the membership (IGMP snooping) */
        MPI_Barrier(MPI_COMM_WORLD);
        long got = 0, overflowed_before = member ? rcvbuf_errors() : -1;
        double first_t = 0, last_t = 0;
        if (rank == 0) {
            struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o.port), .sin_addr = group};
            for (long s = 0; s < o.count; ++s) {
                fill(buf, o.size, (uint32_t)round, (uint32_t)s);
                while (sendto(sock, buf, (size_t)o.size, 0, (struct sockaddr *)&to, sizeof to) < 0 && errno == ENOBUFS)
                    usleep(100);
            }
        } else if (member) {
            for (;;) {
                struct pollfd p = {.fd = sock, .events = POLLIN};
                if (poll(&p, 1, (int)o.timeout_ms + (got ? 0 : 1500)) <= 0) break;
                ssize_t n = recv(sock, buf, (size_t)o.size, 0);
                uint32_t seq;
                if (n != o.size) continue;
                int v = intact(buf, o.size, (uint32_t)round, &seq);
                if (v < 0) continue;
                if (!v) corrupt = 1;
                if (!got) first_t = now();
                last_t = now();
                ++got;
            }
            setsockopt(sock, IPPROTO_IP, IP_DROP_MEMBERSHIP, &mreq, sizeof mreq);
        }
        /* per receiver: what reached its node, read or overflowed; -1 where the counter is unreadable or
         * counts more than was sent (other sockets of the node overflowed too: it says nothing of this one) */
        long overflowed = member && overflowed_before >= 0 ? rcvbuf_errors() - overflowed_before : -1;
        double reached = !member ? 1e300 : overflowed >= 0 && got + overflowed <= o.count
                             ? (double)(got + overflowed) : -1;
        double reached_min;
        MPI_Reduce(&reached, &reached_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        /* per receiver: datagrams, rate over its receive window */
        double mine[2] = {member ? (double)got : 1e300, 0};
        double span = last_t - first_t;
        mine[1] = member ? (got > 1 && span > 0 ? (got - 1) * (double)o.size * 8 / span / 1e6 : 0) : 1e300;
        double mins[2], sum = member ? (double)got : 0, total;
        int rmember = member && remote, nrm;
        MPI_Reduce(mine, mins, 2, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(&rmember, &nrm, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("round receivers %d remote %d sent %ld delivered_min %.0f delivered_mean %.1f mbps_min %.1f "
                   "reached_min %.0f\n", receivers, nrm, o.count, mins[0], total / receivers, mins[1], reached_min);
        if (receivers == nranks - 1) {
            int any_corrupt;
            MPI_Reduce(&corrupt, &any_corrupt, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0)
                printf("mcast: ranks %d remote_receivers %d group %s:%ld iface %s %s\n", nranks, nremote, o.group,
                       o.port, inet_ntoa(ifaddr), any_corrupt ? "INVALID" : "VALID");
            corrupt = any_corrupt;
            break;
        }
    }
    free(buf);
    close(sock);
    MPI_Bcast(&corrupt, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return corrupt ? 1 : 0;
}
