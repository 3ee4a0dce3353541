"""IPv4/IPv6 dual-stack availability of this node (paper 003, test 14)."""
import socket


def _loopback_roundtrip(family, address):
    """True when a TCP connection to the loopback address of `family` works."""
    try:
        with socket.socket(family, socket.SOCK_STREAM) as server:
            server.bind((address, 0))
            server.listen(1)
            port = server.getsockname()[1]
            with socket.create_connection((address, port), timeout=5) as client:
                conn, _ = server.accept()
                with conn:
                    client.sendall(b"yee")
                    return conn.recv(3) == b"yee"
    except OSError:
        return False


def _ipv6_global_addresses(path="/proc/net/if_inet6"):
    """Interface addresses that are neither loopback nor link-local."""
    out = []
    try:
        with open(path, encoding="ascii") as f:
            for line in f:
                fields = line.split()
                if len(fields) < 6:
                    continue
                raw, scope, iface = fields[0], int(fields[3], 16), fields[5]
                if scope in (0x10, 0x20):  # host (loopback), link
                    continue
                addr = ":".join(raw[i:i + 4] for i in range(0, 32, 4))
                out.append(f"{iface} {socket.inet_ntop(socket.AF_INET6, socket.inet_pton(socket.AF_INET6, addr))}")
    except (OSError, ValueError):
        pass
    return out


def probe():
    """Dual-stack state of this node as a dict."""
    return {"ipv4_loopback": _loopback_roundtrip(socket.AF_INET, "127.0.0.1"),
            "ipv6_kernel": socket.has_ipv6,
            "ipv6_loopback": socket.has_ipv6 and _loopback_roundtrip(socket.AF_INET6, "::1"),
            "ipv6_global_addresses": _ipv6_global_addresses()}
