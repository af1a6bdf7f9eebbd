#!/usr/bin/env python3
"""The simulated "user's proxy" on a sim host's loopback (seed 000 keeps one on 127.0.0.1:27890).

It answers requests for one check host itself and refuses everything else, so a request that reaches
it proves the path task container -> docker gateway -> socat bridge -> proxy, while nothing ever leaves
the simulated cluster. Every request is logged (one line to stdout, i.e. the journal).
"""
import http.server
import os
import sys

CHECK_HOST = os.environ.get("SIM_PROXY_CHECK_HOST", "proxy-check.reprobench.test")
LISTEN = os.environ.get("SIM_PROXY_LISTEN", "127.0.0.1")
PORT = int(os.environ.get("SIM_PROXY_PORT", "27890"))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _reply(self, status, text):
        body = (text + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Reprobench-Sim-Proxy", "1")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _handle(self):
        target = self.path
        host = target.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0] if "://" in target else ""
        if host == CHECK_HOST:
            self._reply(200, "reprobench sim proxy ok")
        else:
            self._reply(403, f"the sim proxy only answers for {CHECK_HOST}")

    do_GET = do_HEAD = do_POST = _handle

    def do_CONNECT(self):
        self._reply(403, "the sim proxy does not tunnel")

    def log_message(self, fmt, *args):
        sys.stdout.write("sim-proxy: %s %s\n" % (self.address_string(), fmt % args))
        sys.stdout.flush()


if __name__ == "__main__":
    http.server.ThreadingHTTPServer((LISTEN, PORT), Handler).serve_forever()
