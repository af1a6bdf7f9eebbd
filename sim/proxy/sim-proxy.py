#!/usr/bin/env python3
"""The simulated cluster's HTTP proxies (stdlib only, one thread per connection).

--mode egress   the only way from the sim hosts to the "outside" (registry.sim, pypi.sim, git.sim):
                container <prefix>-proxy, proxy.sim:3128. Basic proxy auth is required (407 otherwise);
                absolute-URI HTTP requests are forwarded (the origin is asked for `Connection: close` and
                its response relayed), CONNECT opens a tunnel; only the allowlisted host:port pairs are
                reachable (403 naming the destination otherwise). The check host is answered here (200).
                Network conditions (latency, bandwidth, injected failures, optionally only for some
                targets) come from a JSON file that is re-read whenever its mtime changes.
--mode forward  the "user's local proxy" on worker-b's loopback (127.0.0.1:27890, like cntlm/clash): no
                client auth, everything (HTTP and CONNECT) relayed to the upstream proxy whose URL, with
                credentials, is read from a root-only file, adding Proxy-Authorization.

Every connection's outcome is one line on stdout (the journal / `docker logs`); failed and refused ones
start with FAILED / REFUSED. Credentials are never logged.
"""
import argparse
import base64
import hmac
import json
import os
import random
import re
import select
import socket
import socketserver
import struct
import sys
import threading
import time
import urllib.parse

CHECK_HOST = "proxy-check.reprobench.test"
DEFAULT_ALLOW = "registry.sim:5000,pypi.sim:80,git.sim:80"
MAX_HEAD = 64 * 1024
IO_TIMEOUT = 120.0
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authorization", "proxy-connection", "proxy-authenticate", "te", "trailer", "upgrade"}
# What an injected failure answers besides "reset": a proxy's 502, or a registry/index that is overloaded
# (429, 503). For plain HTTP through the proxy the client cannot tell it from the origin's own answer.
FAIL_STATUS = {"502": "Bad Gateway", "503": "Service Unavailable", "429": "Too Many Requests"}
DEFAULT_CONDITIONS = {"latencyMs": 0, "bandwidthKBps": 0, "failFraction": 0.0, "failWith": "502", "seed": 0, "failTargets": []}
HOST_PORT_TARGET = re.compile(r"^([a-z0-9]([a-z0-9.-]*[a-z0-9])?):(\d{1,5})$", re.IGNORECASE)
URL_PREFIX_TARGET = re.compile(r"^http://[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d{1,5})?(/\S*)?$", re.IGNORECASE)

_log_lock = threading.Lock()


def log(line):
    with _log_lock:
        sys.stdout.write("sim-proxy: %s\n" % line)
        sys.stdout.flush()


class Conditions:
    """The network conditions file, re-read when its mtime (or size) changes; one seeded RNG draw per connection."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.stamp = None
        self.values = dict(DEFAULT_CONDITIONS)
        self.rng = random.Random(0)

    def current(self):
        """(conditions, failing?) for one new connection. Without failTargets every connection draws here, as
        it always has; with them only the matching ones draw, later (draw), once the target is known."""
        with self.lock:
            self._reload()
            c = dict(self.values)
            fail = not c["failTargets"] and c["failFraction"] > 0 and self.rng.random() < c["failFraction"]
            return c, fail

    def draw(self, c):
        """Whether a connection that matches failTargets fails (one draw of the seeded sequence)."""
        with self.lock:
            return c["failFraction"] > 0 and self.rng.random() < c["failFraction"]

    def _reload(self):
        if not self.path:
            return
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if stamp == self.stamp:
            return
        try:
            with open(self.path) as f:
                raw = json.load(f)
        except (OSError, ValueError) as err:
            log("conditions file %s unreadable (%s); keeping %s" % (self.path, err, json.dumps(self.values, sort_keys=True)))
            return
        problem = fail_targets_problem(raw.get("failTargets", []))
        if problem:
            # Failing the wrong connections (every one, with the targets dropped) is worse than old conditions.
            log("conditions file %s: failTargets %s; keeping %s" % (self.path, problem, json.dumps(self.values, sort_keys=True)))
            self.stamp = stamp
            return
        values = dict(DEFAULT_CONDITIONS)
        for key in DEFAULT_CONDITIONS:
            if key in raw:
                values[key] = raw[key]
        values["failTargets"] = list(dict.fromkeys(values["failTargets"]))
        values["latencyMs"] = max(0, int(values["latencyMs"]))
        values["bandwidthKBps"] = max(0, int(values["bandwidthKBps"]))
        values["failFraction"] = min(1.0, max(0.0, float(values["failFraction"])))
        values["failWith"] = values["failWith"] if values["failWith"] in FAIL_STATUS or values["failWith"] == "reset" else "502"
        values["seed"] = int(values["seed"])
        self.stamp = stamp
        # A new seed (or a rewritten file) restarts the failure sequence: the same file gives the same run.
        self.rng = random.Random(values["seed"])
        self.values = values
        log("conditions %s" % json.dumps(values, sort_keys=True))


def fail_targets_problem(targets):
    """Why `targets` is not a valid failTargets list, or None (sim/outside.ts failTargetProblem checks the same)."""
    if not isinstance(targets, list):
        return "must be a list, got %r" % (targets,)
    for t in targets:
        if not isinstance(t, str):
            return "entry %r is not a string" % (t,)
        if t.lower().startswith("https://"):
            return "entry %r: https:// goes through a CONNECT tunnel, where the proxy sees only host:port" % t
        m = HOST_PORT_TARGET.match(t)
        if m:
            if not 1 <= int(m.group(3)) <= 65535:
                return "entry %r: port is not 1..65535" % t
            continue
        if not URL_PREFIX_TARGET.match(t):
            return "entry %r: expected \"host:port\" or an absolute http:// URL prefix" % t
    return None


def matches_fail_target(targets, method, target, host, port):
    """Whether a connection is a candidate for failFraction: its host:port is listed, or (plain HTTP only)
    its absolute URL starts with a listed prefix (compared as sent and without the default port)."""
    if ("%s:%d" % (host, port)).lower() in (t.lower() for t in targets):
        return True
    if method == "CONNECT":
        return False
    url = urllib.parse.urlsplit(target)
    canonical = "http://%s%s%s" % (host.lower(), "" if port == 80 else ":%d" % port, url.path or "/")
    if url.query:
        canonical += "?" + url.query
    for t in targets:
        if "://" not in t:
            continue
        prefix = t if "/" in t[len("http://"):] else t + "/"
        netloc, _, rest = prefix[len("http://"):].partition("/")
        netloc = netloc.lower()
        if netloc.endswith(":80"):
            netloc = netloc[: -len(":80")]
        prefix = "http://" + netloc + "/" + rest
        if target.startswith(prefix) or canonical.startswith(prefix):
            return True
    return False


class Throttle:
    """Per-connection, per-direction bandwidth cap (bytes/s; 0 = none)."""

    def __init__(self, bytes_per_second):
        self.rate = bytes_per_second
        self.start = time.monotonic()
        self.sent = 0

    def account(self, n):
        if self.rate <= 0:
            return
        self.sent += n
        due = self.start + self.sent / self.rate
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)  # the simulated link's speed, not synchronisation

    def chunk(self):
        return 65536 if self.rate <= 0 else max(512, min(65536, self.rate // 10))


def read_head(sock):
    """Bytes up to and including the blank line, and whatever followed in the same reads."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        data = sock.recv(65536)
        if not data:
            raise ConnectionError("client closed before sending a complete request head")
        buf += data
        if len(buf) > MAX_HEAD:
            raise ValueError("request head larger than %d bytes" % MAX_HEAD)
    end = buf.index(b"\r\n\r\n") + 4
    return buf[:end], buf[end:]


def parse_head(head):
    lines = head.decode("iso-8859-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        raise ValueError("bad request line %r" % lines[0][:100])
    headers = []
    for line in lines[1:]:
        if not line:
            continue
        name, _, value = line.partition(":")
        headers.append((name.strip(), value.strip()))
    return parts[0], parts[1], parts[2], headers


def header(headers, name):
    for k, v in headers:
        if k.lower() == name:
            return v
    return None


def split_hostport(value, default_port):
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        return value, default_port
    return host, int(port)


def reply(sock, status, reason, text, extra=()):
    body = (text + "\n").encode()
    lines = ["HTTP/1.1 %d %s" % (status, reason), "Content-Type: text/plain", "Content-Length: %d" % len(body), "Connection: close", "X-Reprobench-Sim-Proxy: 1"]
    lines.extend(extra)
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)


def reset(sock):
    """Closes with an RST instead of a FIN (failWith "reset")."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def pipe(a, b, throttle_ab, throttle_ba, first_eof_ends=False):
    """Relays a<->b until both sides have closed (or `b` closed, when first_eof_ends). Returns bytes (a->b, b->a)."""
    counts = {a: 0, b: 0}
    open_ = {a: True, b: True}
    other = {a: b, b: a}
    throttles = {a: throttle_ab, b: throttle_ba}
    while open_[a] or open_[b]:
        readable, _, _ = select.select([s for s in (a, b) if open_[s]], [], [], IO_TIMEOUT)
        if not readable:
            raise TimeoutError("no data for %ds" % IO_TIMEOUT)
        for src in readable:
            try:
                data = src.recv(throttles[src].chunk())
            except ConnectionResetError:
                data = b""
            dst = other[src]
            if not data:
                open_[src] = False
                if first_eof_ends and src is b:
                    return counts[a], counts[b]
                try:
                    dst.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                continue
            throttles[src].account(len(data))
            dst.sendall(data)
            counts[src] += len(data)
    return counts[a], counts[b]


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_handler(opts):
    conditions = Conditions(opts.conditions)
    allow = {split_hostport(x.strip(), 80) for x in opts.allow.split(",") if x.strip()}
    resolve = {}
    for item in filter(None, (opts.resolve or "").split(",")):
        name, _, ip = item.partition("=")
        resolve[name.strip()] = ip.strip()
    expected_auth = None
    upstream = None
    if opts.mode == "egress":
        if opts.credentials_file:
            expected_auth = credentials_from_url_file(opts.credentials_file)
    else:
        upstream = upstream_from_file(opts.upstream_file)

    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            client = self.request
            client.settimeout(IO_TIMEOUT)
            who = "%s:%d" % self.client_address[:2]
            started = time.monotonic()
            what = "?"
            try:
                if opts.mode == "forward":
                    what = self.forward(client)
                    return
                cond, fail = conditions.current()
                if cond["latencyMs"]:
                    time.sleep(cond["latencyMs"] / 1000.0)  # the simulated link's latency
                head, rest = read_head(client)
                method, target, version, headers = parse_head(head)
                what = "%s %s" % (method, target if method == "CONNECT" else target.split("?", 1)[0])
                if expected_auth is not None and not auth_ok(header(headers, "proxy-authorization"), expected_auth):
                    reply(client, 407, "Proxy Authentication Required", "sim proxy: proxy authentication required", ['Proxy-Authenticate: Basic realm="reprobench-sim"'])
                    log("REFUSED %s %s: 407 %s credentials" % (who, what, "wrong" if header(headers, "proxy-authorization") else "no"))
                    return
                if method == "CONNECT":
                    host, port = split_hostport(target, 443)
                else:
                    url = urllib.parse.urlsplit(target)
                    if url.scheme != "http" or not url.hostname:
                        reply(client, 400, "Bad Request", "sim proxy: expected an absolute http:// URI or CONNECT, got %s" % target[:200])
                        log("REFUSED %s %s: 400 not a proxy request" % (who, what))
                        return
                    host, port = url.hostname, url.port or 80
                    if host == CHECK_HOST:
                        reply(client, 200, "OK", "reprobench sim proxy ok")
                        log("OK %s %s: 200 answered by the proxy" % (who, what))
                        return
                if (host, port) not in allow:
                    reply(client, 403, "Forbidden", "sim proxy: destination %s:%d is not allowed (allowed: %s)" % (host, port, opts.allow))
                    log("REFUSED %s %s: 403 destination %s:%d not allowed" % (who, what, host, port))
                    return
                if cond["failTargets"]:
                    fail = matches_fail_target(cond["failTargets"], method, target, host, port) and conditions.draw(cond)
                if fail:
                    if cond["failWith"] == "reset":
                        reset(client)
                    else:
                        status = cond["failWith"]
                        reply(client, int(status), FAIL_STATUS[status], "sim proxy: injected failure (failFraction %s) for %s:%d" % (cond["failFraction"], host, port))
                    log("FAILED %s %s: injected %s (failFraction %s)" % (who, what, cond["failWith"], cond["failFraction"]))
                    return
                try:
                    origin = socket.create_connection((resolve.get(host, host), port), timeout=10)
                except OSError as err:
                    reply(client, 502, "Bad Gateway", "sim proxy: cannot connect to %s:%d: %s" % (host, port, err))
                    log("FAILED %s %s: 502 cannot connect to %s:%d: %s" % (who, what, host, port, err))
                    return
                rate = cond["bandwidthKBps"] * 1024
                with origin:
                    origin.settimeout(IO_TIMEOUT)
                    if method == "CONNECT":
                        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                        if rest:
                            origin.sendall(rest)
                        up, down = pipe(client, origin, Throttle(rate), Throttle(rate))
                    else:
                        path = url.path or "/"
                        if url.query:
                            path += "?" + url.query
                        lines = ["%s %s %s" % (method, path, version)]
                        lines += ["%s: %s" % (k, v) for k, v in headers if k.lower() not in HOP_BY_HOP]
                        if header(headers, "host") is None:
                            lines.append("Host: %s" % url.netloc.rpartition("@")[2])
                        lines.append("Connection: close")
                        origin.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("iso-8859-1") + rest)
                        # The origin closes after its response (Connection: close): that ends the exchange.
                        up, down = pipe(client, origin, Throttle(rate), Throttle(rate), first_eof_ends=True)
                log("OK %s %s: %d bytes up, %d down in %.0f ms" % (who, what, up + len(rest), down, (time.monotonic() - started) * 1000))
            except Exception as err:  # noqa: BLE001 - one line per failed connection, whatever broke
                log("FAILED %s %s: %s: %s" % (who, what, type(err).__name__, err))

        def forward(self, client):
            head, rest = read_head(client)
            method, target, version, headers = parse_head(head)
            what = "%s %s" % (method, target if method == "CONNECT" else target.split("?", 1)[0])
            lines = ["%s %s %s" % (method, target, version)]
            lines += ["%s: %s" % (k, v) for k, v in headers if k.lower() not in ("proxy-authorization", "proxy-connection", "connection", "keep-alive")]
            lines.append("Proxy-Authorization: Basic %s" % upstream["auth"])
            if method != "CONNECT":
                lines.append("Connection: close")
            try:
                up_sock = socket.create_connection((upstream["host"], upstream["port"]), timeout=10)
            except OSError as err:
                reply(client, 502, "Bad Gateway", "sim forwarder: cannot connect to the upstream proxy %s:%d: %s" % (upstream["host"], upstream["port"], err))
                log("FAILED %s %s: upstream proxy %s:%d unreachable: %s" % ("%s:%d" % self.client_address[:2], what, upstream["host"], upstream["port"], err))
                return what
            with up_sock:
                up_sock.settimeout(IO_TIMEOUT)
                up_sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("iso-8859-1") + rest)
                up, down = pipe(client, up_sock, Throttle(0), Throttle(0), first_eof_ends=method != "CONNECT")
            log("OK %s %s: relayed to %s:%d (%d bytes up, %d down)" % ("%s:%d" % self.client_address[:2], what, upstream["host"], upstream["port"], up, down))
            return what

    return Handler


def auth_ok(value, expected):
    if not value or not value.lower().startswith("basic "):
        return False
    return hmac.compare_digest(value[6:].strip().encode(), expected.encode())


def credentials_from_url_file(path):
    with open(path) as f:
        url = urllib.parse.urlsplit(f.read().strip())
    if url.username is None or url.password is None:
        raise SystemExit("sim-proxy: %s holds no user:password in its URL" % path)
    pair = "%s:%s" % (urllib.parse.unquote(url.username), urllib.parse.unquote(url.password))
    return base64.b64encode(pair.encode()).decode()


def upstream_from_file(path):
    if not path:
        raise SystemExit("sim-proxy: --mode forward needs --upstream-file")
    with open(path) as f:
        url = urllib.parse.urlsplit(f.read().strip())
    if url.scheme != "http" or not url.hostname:
        raise SystemExit("sim-proxy: %s: expected http://user:password@host:port" % path)
    return {"host": url.hostname, "port": url.port or 80, "auth": credentials_from_url_file(path)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mode", choices=["egress", "forward"], default=os.environ.get("SIM_PROXY_MODE", "egress"))
    p.add_argument("--listen", default=os.environ.get("SIM_PROXY_LISTEN", "0.0.0.0"))
    p.add_argument("--port", type=int, default=int(os.environ.get("SIM_PROXY_PORT", "3128")))
    p.add_argument("--credentials-file", help="egress: file holding the proxy URL http://user:password@…; clients must send these credentials")
    p.add_argument("--upstream-file", help="forward: file holding the upstream proxy URL with credentials")
    p.add_argument("--conditions", help="egress: JSON network conditions file (re-read when it changes)")
    p.add_argument("--allow", default=DEFAULT_ALLOW, help="egress: comma-separated host:port destinations")
    p.add_argument("--resolve", default="", help="name=ip,… resolved before DNS (tests)")
    opts = p.parse_args()
    handler = make_handler(opts)
    server = Server((opts.listen, opts.port), handler)
    host, port = server.server_address[:2]
    log("%s proxy listening on %s:%d%s" % (opts.mode, host, port, "" if opts.mode == "forward" else " (allow %s)" % opts.allow))
    server.serve_forever()


if __name__ == "__main__":
    main()
