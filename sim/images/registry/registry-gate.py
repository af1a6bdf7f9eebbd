#!/usr/bin/env python3
"""registry-gate: Docker Hub's pull limits in front of the sim registry (stdlib only, one thread per connection).

Listens on :5000 in the registry container and forwards every request, bodies streamed both ways (chunked
uploads, Content-Length, Range and Location passed through, the client's Host kept so the registry's upload
URLs point back at the address the client used), to Debian's docker-registry on 127.0.0.1:5001.

What it adds, as Docker Hub does it:
- a pull is a GET of /v2/<name>/manifests/<ref>; it is counted before it is forwarded, per client IP for
  anonymous clients and per account for authenticated ones, in a sliding window; over the limit the answer
  is 429 TOOMANYREQUESTS (nothing forwarded). HEAD and blobs are free;
- every /v2/ response carries `ratelimit-limit: N;w=W`, `ratelimit-remaining: R;w=W` and
  `docker-ratelimit-source` (the client IP, or the account);
- GET /v2/ without Authorization is answered 401 with a Bearer challenge whose realm is this gate's /token
  (as Docker Hub's auth.docker.io): /token gives any client a token, an anonymous one without credentials
  and the account's with the right Basic credentials. Requests may also carry the Basic credentials
  themselves. Any other request without Authorization is served anonymously; wrong credentials (or a token
  this gate did not sign) get 401 UNAUTHORIZED on every request.

The limits come from a JSON file (--quota), re-read whenever its mtime changes:
  {"anonymousPulls": N, "authenticatedPulls": M, "windowSeconds": W, "countsSince": "<ISO time>"}
(countsSince, optional: pulls before it are forgotten). Every request is appended to --log as one JSON line
  {"t", "client", "user", "method", "path", "repo", "ref", "counted", "status"}
and the counted pulls still inside the window are read back from it at start, so a restarted gate
remembers them. The password is read from --password-file (never from argv or the environment).
"""
import argparse
import base64
import collections
import datetime
import hashlib
import hmac
import http.client
import http.server
import json
import os
import re
import socket
import sys
import threading
import time
import urllib.parse

MANIFEST_RE = re.compile(r"^/v2/(?P<repo>.+)/manifests/(?P<ref>[^/]+)$")
REPO_RE = re.compile(r"^/v2/(?P<repo>.+)/(?:manifests|blobs)/(?P<ref>[^/]+)$|^/v2/(?P<repo2>.+)/(?:tags/list|blobs/uploads/.*)$")
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer", "trailers", "transfer-encoding", "upgrade"}
# Not forwarded: the registry behind the gate has no auth of its own, and Expect is answered here.
NOT_FORWARDED = HOP_BY_HOP | {"authorization", "host", "expect", "content-length"}
SERVICE = "registry.sim"
CHUNK = 64 * 1024
IO_TIMEOUT = 600
TOKEN_TTL = 300
DEFAULTS = {"anonymousPulls": 100, "authenticatedPulls": 2000, "windowSeconds": 3600, "countsSince": None}
LIMIT_MAX = 10_000_000
ANON_MESSAGE = "You have reached your unauthenticated pull rate limit. https://www.docker.com/increase-rate-limit"
USER_MESSAGE = "You have reached your pull rate limit as '%s'. You may increase the limit by upgrading. https://www.docker.com/increase-rate-limit"


def log(line):
    sys.stdout.write("%s %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%S"), line))
    sys.stdout.flush()


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


# ---------------------------------------------------------------------------------------------------------
# Quota


def normalize_quota(obj, base=None, where="quota"):
    """Checks and completes a quota object; raises ValueError naming the bad key."""
    out = dict(DEFAULTS if base is None else base)
    if not isinstance(obj, dict):
        raise ValueError("%s: expected a JSON object" % where)
    for key, value in obj.items():
        if key == "comment":
            continue
        if key not in DEFAULTS:
            raise ValueError("%s: unknown key %r; expected %s" % (where, key, ", ".join(DEFAULTS)))
        if key == "countsSince":
            if value is not None:
                if not isinstance(value, str):
                    raise ValueError("%s: countsSince: expected an ISO time or null" % where)
                try:
                    parse_iso(value)
                except ValueError:
                    raise ValueError("%s: countsSince: got %r; expected an ISO time" % (where, value)) from None
            out[key] = value
            continue
        low = 1 if key == "windowSeconds" else 0
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= LIMIT_MAX:
            raise ValueError("%s: %s: got %s; expected an integer from %d to %d" % (where, key, json.dumps(value), low, LIMIT_MAX))
        out[key] = value
    return out


class QuotaFile:
    """The limits, re-read when the file's mtime (or size) changes; the last good values stay on errors."""

    def __init__(self, path, defaults):
        self.path = path
        self.values = dict(defaults)
        self.stamp = None
        self.lock = threading.Lock()

    def current(self):
        with self.lock:
            if self.path:
                try:
                    st = os.stat(self.path)
                    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
                except OSError:
                    stamp = None
                if stamp != self.stamp:
                    self.stamp = stamp
                    if stamp is not None:
                        try:
                            with open(self.path) as f:
                                self.values = normalize_quota(json.load(f), DEFAULTS, self.path)
                            log("quota %s" % json.dumps(self.values, sort_keys=True))
                        except (OSError, ValueError) as err:
                            log("quota file %s unusable (%s); keeping %s" % (self.path, err, json.dumps(self.values, sort_keys=True)))
            return dict(self.values)


class Windows:
    """Sliding windows of counted pulls, one per principal ("ip:<addr>" or "user:<name>")."""

    def __init__(self):
        self.events = collections.defaultdict(collections.deque)
        self.lock = threading.Lock()

    def _prune(self, key, now, window, since):
        q = self.events[key]
        # Sorted: what left the window, and what came before countsSince, is at the left end.
        while q and (q[0] <= now - window or q[0] < since):
            q.popleft()
        return q

    def remaining(self, key, limit, window, since, now):
        with self.lock:
            return max(0, limit - len(self._prune(key, now, window, since)))

    def take(self, key, limit, window, since, now):
        """Counts one pull if the window has room: (True, remaining after it) or (False, 0)."""
        with self.lock:
            q = self._prune(key, now, window, since)
            if len(q) >= limit:
                return False, 0
            q.append(now)
            return True, max(0, limit - len(q))

    def add(self, key, t):
        with self.lock:
            q = self.events[key]
            q.append(t)
            if len(q) > 1 and q[-2] > t:  # replayed out of order: keep the deque sorted
                self.events[key] = collections.deque(sorted(q))


def principal_key(client, user):
    return "user:%s" % user if user else "ip:%s" % client


def replay(windows, log_path, quota, now):
    """Counted pulls still inside the window, from the request log (a restarted gate remembers them)."""
    if not log_path or not os.path.exists(log_path):
        return 0
    since = parse_iso(quota["countsSince"]) if quota.get("countsSince") else 0
    n = 0
    with open(log_path, errors="replace") as f:
        for line in f:
            try:
                rec = json.loads(line)
                if not rec.get("counted"):
                    continue
                t = parse_iso(rec["t"])
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
            if t > now - quota["windowSeconds"] and t >= since:
                windows.add(principal_key(rec.get("client"), rec.get("user")), t)
                n += 1
    return n


# ---------------------------------------------------------------------------------------------------------
# Credentials and tokens


def token_key(password):
    return hashlib.sha256(b"reprobench-registry-gate-token\0" + password.encode()).digest()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_token(key, user, now, ttl=TOKEN_TTL):
    payload = b64url(json.dumps({"sub": user or "", "exp": int(now + ttl)}, separators=(",", ":")).encode())
    return "%s.%s" % (payload, b64url(hmac.new(key, payload.encode(), hashlib.sha256).digest()))


def check_token(key, token, now):
    """The token's user ("" for anonymous), or None when it is not ours or has expired."""
    payload, _, sig = token.partition(".")
    want = b64url(hmac.new(key, payload.encode(), hashlib.sha256).digest())
    if not sig or not hmac.compare_digest(sig, want):
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except ValueError:
        return None
    if not isinstance(claims, dict) or claims.get("exp", 0) < now:
        return None
    return str(claims.get("sub", ""))


def classify(header, username, password, key, now):
    """("anonymous", None) | ("user", name) | ("bad", why) for an Authorization header (or None)."""
    if not header:
        return "anonymous", None
    scheme, _, value = header.strip().partition(" ")
    scheme = scheme.lower()
    if scheme == "basic":
        try:
            user, _, pw = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            return "bad", "malformed Basic credentials"
        if user == username and password and hmac.compare_digest(pw, password):
            return "user", user
        return "bad", "incorrect username or password"
    if scheme == "bearer":
        user = check_token(key, value.strip(), now)
        if user is None:
            return "bad", "invalid or expired token"
        return ("user", user) if user else ("anonymous", None)
    return "bad", "unsupported authorization scheme %r" % scheme


# ---------------------------------------------------------------------------------------------------------
# The server


class RequestLog:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()

    def write(self, record):
        if not self.path:
            return
        line = json.dumps(record, separators=(",", ":")) + "\n"
        with self.lock:
            try:
                with open(self.path, "a") as f:
                    f.write(line)
            except OSError as err:
                log("cannot append to %s: %s" % (self.path, err))


def make_handler(opts, quota_file, windows, request_log, password, clock=time.time):
    key = token_key(password)
    upstream_host, _, upstream_port = opts.upstream.rpartition(":")

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = IO_TIMEOUT
        server_version = "reprobench-registry-gate"

        def log_message(self, fmt, *args):  # one line per request is in the JSON log; errors only here
            pass

        def do_GET(self):
            self.serve()

        do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

        # -------------------------------------------------------------------------------------------------
        def serve(self):
            now = clock()
            path = urllib.parse.urlsplit(self.path).path or "/"
            client = self.client_address[0]
            kind, who = classify(self.headers.get("Authorization"), opts.username, password, key, now)
            user = who if kind == "user" else None
            m = REPO_RE.match(path)
            repo = (m.group("repo") or m.group("repo2")) if m else None
            ref = m.group("ref") if m else None
            record = {"t": iso(now), "client": client, "user": user, "method": self.command, "path": path, "repo": repo, "ref": ref, "counted": False, "status": None}
            self.record, self.logged = record, False
            try:
                if path == "/token":
                    record["status"] = self.token(kind, who, now)
                    return
                v2 = path == "/v2" or path.startswith("/v2/")
                quota = quota_file.current()
                limit = quota["authenticatedPulls"] if user else quota["anonymousPulls"]
                window = quota["windowSeconds"]
                since = parse_iso(quota["countsSince"]) if quota.get("countsSince") else 0
                principal = principal_key(client, user)
                extra = []

                def rate_headers(remaining):
                    return [("ratelimit-limit", "%d;w=%d" % (limit, window)), ("ratelimit-remaining", "%d;w=%d" % (remaining, window)), ("docker-ratelimit-source", user or client)]

                if kind == "bad":
                    self.drain()
                    record["status"] = self.error(401, "UNAUTHORIZED", who, rate_headers(windows.remaining(principal, limit, window, since, now)) if v2 else [], challenge=True)
                    return
                if v2 and path in ("/v2", "/v2/") and self.command == "GET" and not self.headers.get("Authorization"):
                    record["status"] = self.error(401, "UNAUTHORIZED", "authentication required", rate_headers(windows.remaining(principal, limit, window, since, now)), challenge=True)
                    return
                if self.command == "GET" and MANIFEST_RE.match(path):
                    ok, remaining = windows.take(principal, limit, window, since, now)
                    if not ok:
                        record["status"] = self.error(429, "TOOMANYREQUESTS", USER_MESSAGE % user if user else ANON_MESSAGE, rate_headers(0))
                        return
                    record["counted"] = True
                    extra = rate_headers(remaining)
                elif v2:
                    extra = rate_headers(windows.remaining(principal, limit, window, since, now))
                record["status"] = self.forward(extra, int(upstream_port), upstream_host)
            except (ConnectionError, socket.timeout, BrokenPipeError) as err:
                self.close_connection = True
                if record["status"] is None:
                    record["status"] = 499
                log("connection of %s %s %s ended: %s: %s" % (client, self.command, path, type(err).__name__, err))
            finally:
                if not self.logged:
                    request_log.write(record)

        def log_reply(self, status):
            """Logs the request with its status before the reply's headers leave: a client that has its
            answer finds the request in the log (the tests and `sim registry --counts` read it right after)."""
            self.record["status"] = status
            request_log.write(self.record)
            self.logged = True

        # -------------------------------------------------------------------------------------------------
        def challenge_header(self):
            if opts.challenge == "basic":
                return 'Basic realm="%s"' % SERVICE
            host = self.headers.get("Host") or "%s:5000" % SERVICE
            return 'Bearer realm="http://%s/token",service="%s"' % (host, SERVICE)

        def error(self, status, code, message, headers, challenge=False):
            body = json.dumps({"errors": [{"code": code, "message": message}]}).encode()
            if challenge:
                headers = headers + [("WWW-Authenticate", self.challenge_header())]
            self.reply(status, body, headers + [("Content-Type", "application/json; charset=utf-8"), ("Docker-Distribution-Api-Version", "registry/2.0")])
            return status

        def reply(self, status, body, headers):
            self.send_response_only(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Date", self.date_time_string())
            self.send_header("Content-Length", str(len(body)))
            if self.close_connection or (self.headers.get("Connection", "").lower() == "close"):
                self.close_connection = True
                self.send_header("Connection", "close")
            self.log_reply(status)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            self.wfile.flush()

        def token(self, kind, who, now):
            if kind == "bad":
                self.drain()
                return self.error(401, "UNAUTHORIZED", who, [])
            self.drain()
            user = who if kind == "user" else ""
            tok = make_token(key, user, now)
            body = json.dumps({"token": tok, "access_token": tok, "expires_in": TOKEN_TTL, "issued_at": iso(now)}).encode()
            self.reply(200, body, [("Content-Type", "application/json")])
            return 200

        def drain(self):
            """Reads (and drops) a request body we answer without forwarding, so the connection stays usable."""
            for _ in self.body_chunks():
                pass

        def body_chunks(self):
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                while True:
                    line = self.rfile.readline(65537)
                    if not line:
                        raise ConnectionError("client closed inside a chunked body")
                    size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                            pass  # trailers
                        return
                    left = size
                    while left:
                        data = self.rfile.read(min(left, CHUNK))
                        if not data:
                            raise ConnectionError("client closed inside a chunk")
                        left -= len(data)
                        yield data
                    self.rfile.readline(3)  # the chunk's CRLF
                return
            length = self.headers.get("Content-Length")
            left = int(length) if length and length.strip().isdigit() else 0
            while left:
                data = self.rfile.read(min(left, CHUNK))
                if not data:
                    raise ConnectionError("client closed inside the body (%d bytes missing)" % left)
                left -= len(data)
                yield data

        def forward(self, extra, port, host):
            conn = http.client.HTTPConnection(host, port, timeout=IO_TIMEOUT)
            try:
                conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                conn.putheader("Host", self.headers.get("Host") or "%s:5000" % SERVICE)
                for k, v in self.headers.items():
                    if k.lower() not in NOT_FORWARDED:
                        conn.putheader(k, v)
                conn.putheader("X-Forwarded-For", self.client_address[0])
                conn.putheader("Connection", "close")
                chunked = "chunked" in self.headers.get("Transfer-Encoding", "").lower()
                if chunked:
                    conn.putheader("Transfer-Encoding", "chunked")
                elif self.headers.get("Content-Length") is not None:
                    conn.putheader("Content-Length", self.headers.get("Content-Length").strip())
                try:
                    conn.endheaders()
                except OSError as err:
                    self.close_connection = True  # its body (if any) stays unread
                    return self.error(502, "UNAVAILABLE", "registry-gate: the registry behind the gate (%s) is not reachable: %s" % (self.upstream_name(), err), extra)
                for data in self.body_chunks():
                    conn.send(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
                if chunked:
                    conn.send(b"0\r\n\r\n")
                try:
                    resp = conn.getresponse()
                except (OSError, http.client.HTTPException) as err:
                    return self.error(502, "UNAVAILABLE", "registry-gate: no answer from the registry behind the gate (%s): %s" % (self.upstream_name(), err), extra)
                self.send_response_only(resp.status, resp.reason)
                has_length = False
                for k, v in resp.getheaders():
                    lk = k.lower()
                    if lk in HOP_BY_HOP:
                        continue
                    has_length = has_length or lk == "content-length"
                    self.send_header(k, v)
                for k, v in extra:
                    self.send_header(k, v)
                bodyless = self.command == "HEAD" or resp.status in (204, 304) or 100 <= resp.status < 200
                chunk_out = not bodyless and not has_length and self.request_version == "HTTP/1.1"
                if not bodyless and not has_length and not chunk_out:
                    self.close_connection = True
                if chunk_out:
                    self.send_header("Transfer-Encoding", "chunked")
                if self.close_connection or self.headers.get("Connection", "").lower() == "close":
                    self.close_connection = True
                    self.send_header("Connection", "close")
                self.log_reply(resp.status)
                self.end_headers()
                if not bodyless:
                    while True:
                        data = resp.read(CHUNK)
                        if not data:
                            break
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunk_out else data)
                    if chunk_out:
                        self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                return resp.status
            finally:
                conn.close()

        def upstream_name(self):
            return opts.upstream

    return Handler


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def read_password(path):
    with open(path) as f:
        password = f.read().strip()
    if not password:
        raise SystemExit("registry-gate: %s is empty" % path)
    return password


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--listen", default="0.0.0.0")
    p.add_argument("--port", type=int, default=5000, help="0: any free port (printed)")
    p.add_argument("--upstream", default="127.0.0.1:5001", help="host:port of the registry behind the gate")
    p.add_argument("--username", default="reprobench-pull")
    p.add_argument("--password-file", required=True)
    p.add_argument("--quota", help="JSON file with the limits (re-read when it changes)")
    p.add_argument("--log", help="JSON-lines request log (appended)")
    p.add_argument("--challenge", choices=["bearer", "basic"], default="bearer", help="the WWW-Authenticate scheme of GET /v2/ (bearer: Docker Hub's)")
    p.add_argument("--anonymous", type=int, default=DEFAULTS["anonymousPulls"], help="default limit while there is no quota file")
    p.add_argument("--authenticated", type=int, default=DEFAULTS["authenticatedPulls"])
    p.add_argument("--window", type=int, default=DEFAULTS["windowSeconds"])
    opts = p.parse_args(argv)
    defaults = normalize_quota({"anonymousPulls": opts.anonymous, "authenticatedPulls": opts.authenticated, "windowSeconds": opts.window}, DEFAULTS, "flags")
    password = read_password(opts.password_file)
    quota_file = QuotaFile(opts.quota, defaults)
    quota = quota_file.current()
    windows = Windows()
    replayed = replay(windows, opts.log, quota, time.time())
    server = Server((opts.listen, opts.port), make_handler(opts, quota_file, windows, RequestLog(opts.log), password))
    host, port = server.server_address[:2]
    log("listening on %s:%d, forwarding to %s; %d counted pull(s) still in the window from %s" % (host, port, opts.upstream, replayed, opts.log))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
