#!/usr/bin/env python3
"""A fake Hugging Face Hub for the sim's "outside" (python3 stdlib only, one thread per connection).

It serves model repos from a directory tree over exactly the part of the Hub's HTTP contract that
huggingface_hub's downloads use (shared reference gpus.md, section 4), so the REAL client (`hf download`,
`snapshot_download`, `hf_hub_download`, `hf cache verify`) runs against it unmodified, directly or through
the sim's egress proxy:

  GET  /api/models/{org}/{name}[/revision/{rev}][?blobs=true]
       {"id", "modelId", "sha", "private", "gated", "disabled", "siblings": [{"rfilename"}, ...]}
  GET  /api/models/{org}/{name}/tree/{rev}[/{dir}]?recursive=true|True&expand=...
       [{"type": "file", "oid": <git blob sha1>, "size", "path", "lfs": {"oid": <sha256>, "size",
       "pointerSize"}}, {"type": "directory", ...}], paginated with `Link: <...&cursor=N>; rel="next"`
       when the faults file sets treePageSize. Never an `xetHash`.
  HEAD /{org}/{name}/resolve/{rev}/{path}
       200, `X-Repo-Commit`, `ETag: "<sha256>"` for LFS files (else the git blob sha1), `Content-Length`,
       `Accept-Ranges: bytes`. Never an `X-Xet-Hash` (so the client never tries Xet).
  GET  the same: the body; `Range: bytes=N-` / `bytes=N-M` answers 206 with `Content-Range`, a range past
       the end 416.
  Errors: 404 with `X-Error-Code: RepoNotFound | RevisionNotFound | EntryNotFound` and `X-Error-Message`;
  with --token-file, a bearer token other than the file's is 401 "Invalid credentials in Authorization
  header"; a gated repo (repo.json "gated": true) without the right token is 401 `X-Error-Code: GatedRepo`.

Layout under --root:
  <org>/<name>/<40-hex revision>/<files...>      one directory per commit
  <org>/<name>/repo.json                         optional: {"refs": {"main": "<rev>"}, "gated": false}
A ref not in repo.json resolves only when it is "main" and the repo has exactly one revision. Files are LFS
when they match the usual .gitattributes patterns (*.safetensors, *.bin, ...) or are >= 10 MiB. Hashes are
computed on first use and cached by (size, mtime).

Faults come from a JSON file (--faults) read at every request (a missing file is no fault; a broken one keeps
the last good value and says so on stderr); counters of "times" rules restart whenever the file is written:
  {"faults": [
     {"kind": "drop", "path": "model-00001-*", "afterBytes": 11000000, "times": 1, "reset": false},
        close the connection (FIN; RST with "reset") when the body reaches file offset afterBytes; a GET that
        starts at or past it is not cut. "times": how many GETs are cut (omitted or 0: every one)
     {"kind": "ignore-range", "path": "*"},      answer 200 with the whole body to a Range request
     {"kind": "content-length", "path": "config.json", "delta": 7},
        HEAD announces size+delta (the client's "Consistency check failed")
     {"kind": "tree-sha256", "path": "model-00002-*"}
        the tree's lfs.oid is a wrong sha256 (what `hf cache verify` and a manifest check must catch)
   ],
   "treePageSize": 0}
Every rule may also carry "repo" (a glob on org/name); "path" is a glob on the file's path in the repo.

Every request is one JSON line in --log, written BEFORE the body is sent (so a client that has finished has
always been logged): {"t", "client", "method", "endpoint", "repo", "revision", "file", "range", "status",
"bytes" (body bytes this answer sends), "fault", "auth" (none|ok|bad; never the token), "ua"}.

Also `add-repo`: put a model directory (e.g. sim/models/hf_model.py's output) into the tree as a new commit.

CLI:
  hub.py serve --root DIR [--listen 127.0.0.1] [--port 0] [--token-file F] [--faults F] [--log F]
  hub.py add-repo --root DIR --repo ORG/NAME --from MODEL_DIR [--fill zeros|random] [--gated] [--ref main]
       prints {"repo", "revision", "gated", "files": [{"path", "size", "sha256", "gitSha1", "lfs"}]}
"""
import argparse
import fnmatch
import hashlib
import hmac
import http.server
import json
import os
import random
import re
import shutil
import socket
import struct
import sys
import threading
import time
import urllib.parse

COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
LFS_PATTERNS = ("*.safetensors", "*.bin", "*.pt", "*.pth", "*.ckpt", "*.gguf", "*.onnx", "*.msgpack", "*.h5",
                "*.npz", "*.zip", "*.tar.gz", "*.model")
LFS_MIN_BYTES = 10 * 1024 * 1024
LFS_POINTER_SIZE = 134
CHUNK = 256 * 1024
FAULT_KINDS = {"drop", "ignore-range", "content-length", "tree-sha256"}
GITATTRIBUTES = "".join("%s filter=lfs diff=lfs merge=lfs -text\n" % p for p in LFS_PATTERNS)
INVALID_TOKEN = "Invalid credentials in Authorization header"


def warn(line):
    sys.stderr.write("hub: %s\n" % line)
    sys.stderr.flush()


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int((t % 1) * 1000)


def git_blob_sha1(path, size):
    h = hashlib.sha1(b"blob %d\0" % size)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def is_lfs(rel, size):
    name = rel.rsplit("/", 1)[-1]
    return size >= LFS_MIN_BYTES or any(fnmatch.fnmatch(name, p) for p in LFS_PATTERNS)


# ---------------------------------------------------------------------------------------------------------
# The repo tree


class Store:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.lock = threading.Lock()
        self.hashes = {}

    def repo_dir(self, repo_id):
        parts = repo_id.split("/")
        if len(parts) != 2 or not all(NAME_RE.match(p) and p not in (".", "..") for p in parts):
            return None
        d = os.path.join(self.root, parts[0], parts[1])
        return d if os.path.isdir(d) else None

    @staticmethod
    def repo_meta(repo_dir):
        try:
            with open(os.path.join(repo_dir, "repo.json"), encoding="utf-8") as f:
                meta = json.load(f)
            return meta if isinstance(meta, dict) else {}
        except (FileNotFoundError, ValueError):
            return {}

    def resolve(self, repo_dir, rev):
        """The commit a revision names, or None."""
        if COMMIT_RE.match(rev):
            return rev if os.path.isdir(os.path.join(repo_dir, rev)) else None
        refs = self.repo_meta(repo_dir).get("refs") or {}
        commit = refs.get(rev)
        if isinstance(commit, str) and COMMIT_RE.match(commit) and os.path.isdir(os.path.join(repo_dir, commit)):
            return commit
        if rev == "main" and not refs:
            commits = [d for d in os.listdir(repo_dir) if COMMIT_RE.match(d) and os.path.isdir(os.path.join(repo_dir, d))]
            if len(commits) == 1:
                return commits[0]
        return None

    @staticmethod
    def files(commit_dir):
        out = []
        for base, dirs, names in os.walk(commit_dir):
            dirs.sort()
            for n in sorted(names):
                out.append(os.path.relpath(os.path.join(base, n), commit_dir).replace(os.sep, "/"))
        return sorted(out)

    def info(self, path, rel):
        """{"size", "sha1", "sha256", "lfs"} of one file; hashed once per (size, mtime)."""
        st = os.stat(path)
        key = (path, st.st_size, st.st_mtime_ns)
        with self.lock:
            cached = self.hashes.get(key)
        if cached is None:
            cached = {"size": st.st_size, "sha1": git_blob_sha1(path, st.st_size), "sha256": file_sha256(path),
                      "lfs": is_lfs(rel, st.st_size)}
            with self.lock:
                self.hashes[key] = cached
        return cached


# ---------------------------------------------------------------------------------------------------------
# Faults


class Faults:
    """The faults file, read at every request; "times" counters restart when it is written (mtime or content)."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.version = None
        self.value = {"faults": [], "treePageSize": 0}
        self.used = {}

    @staticmethod
    def parse(text):
        obj = json.loads(text) if text.strip() else {}
        if not isinstance(obj, dict):
            raise ValueError("expected a JSON object")
        rules = obj.get("faults", [])
        if not isinstance(rules, list):
            raise ValueError("faults: expected a list")
        for i, r in enumerate(rules):
            if not isinstance(r, dict) or r.get("kind") not in FAULT_KINDS:
                raise ValueError("faults[%d]: kind must be one of %s" % (i, ", ".join(sorted(FAULT_KINDS))))
            if r["kind"] == "drop" and not (isinstance(r.get("afterBytes"), int) and r["afterBytes"] >= 0):
                raise ValueError("faults[%d]: drop needs afterBytes >= 0" % i)
            if r["kind"] == "content-length" and not isinstance(r.get("delta"), int):
                raise ValueError("faults[%d]: content-length needs an integer delta" % i)
        page = obj.get("treePageSize", 0)
        if not isinstance(page, int) or page < 0:
            raise ValueError("treePageSize: expected an integer >= 0")
        return {"faults": rules, "treePageSize": page}

    def current(self):
        if not self.path:
            return self.value
        try:
            with open(self.path, encoding="utf-8") as f:
                text = f.read()
                version = (os.fstat(f.fileno()).st_mtime_ns, text)
        except FileNotFoundError:
            text, version = "", None
        with self.lock:
            if version != self.version:
                try:
                    self.value = self.parse(text)
                    self.used = {}
                except ValueError as e:
                    warn("%s: %s (keeping the previous faults)" % (self.path, e))
                self.version = version
            return self.value

    def match(self, kind, repo_id, rel, consume=False):
        """The first rule of this kind for this file (and, with consume, one use of its "times")."""
        value = self.current()
        for i, r in enumerate(value["faults"]):
            if r["kind"] != kind or not fnmatch.fnmatch(repo_id, r.get("repo", "*")) or not fnmatch.fnmatch(rel, r.get("path", "*")):
                continue
            times = r.get("times") or 0
            with self.lock:
                if times and self.used.get(i, 0) >= times:
                    continue
                if consume:
                    self.used[i] = self.used.get(i, 0) + 1
            return r
        return None

    def page_size(self):
        return self.current()["treePageSize"]


class RequestLog:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()

    def write(self, record):
        if not self.path:
            return
        line = json.dumps(record, separators=(",", ":")) + "\n"
        with self.lock:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(line)
                f.flush()


def parse_range(value, size):
    """(start, end inclusive) of a single `bytes=` range; None to send the whole body; "unsatisfiable"."""
    m = re.match(r"^bytes=(\d*)-(\d*)$", (value or "").strip())
    if not m or (m.group(1) == "" and m.group(2) == ""):
        return None
    if m.group(1) == "":
        n = int(m.group(2))
        return (max(0, size - n), size - 1) if n > 0 and size > 0 else "unsatisfiable"
    start = int(m.group(1))
    end = int(m.group(2)) if m.group(2) else size - 1
    if start >= size:
        return "unsatisfiable"
    if end < start:
        return None
    return start, min(end, size - 1)


# ---------------------------------------------------------------------------------------------------------
# HTTP


class HubError(Exception):
    def __init__(self, status, code, message, headers=None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}


def make_handler(store, faults, request_log, token):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "reprobench-fake-hub"

        def log_message(self, fmt, *args):  # the JSON log has every request; errors only here
            pass

        def do_HEAD(self):
            self.serve(head=True)

        def do_GET(self):
            self.serve(head=False)

        def serve(self, head):
            self.record = {"t": iso(time.time()), "client": self.client_address[0], "method": self.command,
                           "endpoint": "other", "repo": None, "revision": None, "file": None,
                           "range": self.headers.get("Range"), "status": None, "bytes": 0, "fault": None,
                           "auth": self.auth_state(), "ua": (self.headers.get("User-Agent") or "")[:200]}
            try:
                url = urllib.parse.urlsplit(self.path)
                segments = [urllib.parse.unquote(s) for s in url.path.split("/")[1:]]
                query = urllib.parse.parse_qs(url.query)
                if self.record["auth"] == "bad":
                    raise HubError(401, None, INVALID_TOKEN)
                if len(segments) >= 3 and segments[0] == "api" and segments[1] == "models":
                    self.api(segments[2:], query, head)
                elif len(segments) >= 5 and segments[2] == "resolve":
                    self.resolve(segments[0] + "/" + segments[1], segments[3], "/".join(segments[4:]), head)
                else:
                    raise HubError(404, None, "Sorry, we can't find the page you are looking for.")
            except HubError as e:
                headers = dict(e.headers)
                if e.code:
                    headers["X-Error-Code"] = e.code
                headers["X-Error-Message"] = e.message
                self.send_json(e.status, {"error": e.message}, head, headers)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def auth_state(self):
            value = self.headers.get("Authorization")
            if not value:
                return "none"
            if token is None:
                return "ok"
            scheme, _, presented = value.partition(" ")
            ok = scheme.lower() == "bearer" and hmac.compare_digest(presented.strip().encode(), token.encode())
            return "ok" if ok else "bad"

        # -- repo lookups ---------------------------------------------------------------------------------

        def repo(self, repo_id):
            self.record["repo"] = repo_id
            d = store.repo_dir(repo_id)
            if d is None:
                raise HubError(404, "RepoNotFound", "Repository not found")
            if store.repo_meta(d).get("gated") and self.record["auth"] != "ok":
                raise HubError(401, "GatedRepo", "Access to model %s is restricted. You must have access to it and be "
                               "authenticated to access it. Please log in." % repo_id)
            return d

        def commit(self, repo_dir, rev, headers=None):
            self.record["revision"] = rev
            commit = store.resolve(repo_dir, rev)
            if commit is None:
                raise HubError(404, "RevisionNotFound", "Invalid rev id: %s" % rev, headers)
            return commit

        # -- /api/models ----------------------------------------------------------------------------------

        def api(self, rest, query, head):
            if len(rest) < 2:
                raise HubError(404, None, "Sorry, we can't find the page you are looking for.")
            repo_id = rest[0] + "/" + rest[1]
            tail = rest[2:]
            if not tail or (tail[0] == "revision" and len(tail) >= 2):
                self.record["endpoint"] = "info"
                d = self.repo(repo_id)
                commit = self.commit(d, "/".join(tail[1:]) if tail else "main")
                self.send_json(200, self.model_info(repo_id, d, commit, query.get("blobs", [""])[0].lower() == "true"), head)
            elif tail[0] == "tree" and len(tail) >= 2:
                self.record["endpoint"] = "tree"
                d = self.repo(repo_id)
                commit = self.commit(d, tail[1])
                self.tree(repo_id, d, commit, "/".join(tail[2:]).strip("/"), query, head)
            else:
                raise HubError(404, None, "Sorry, we can't find the page you are looking for.")

        def model_info(self, repo_id, repo_dir, commit, blobs):
            commit_dir = os.path.join(repo_dir, commit)
            siblings = []
            used = 0
            for rel in store.files(commit_dir):
                s = {"rfilename": rel}
                info = store.info(os.path.join(commit_dir, rel), rel)
                used += info["size"]
                if blobs:
                    s.update({"size": info["size"], "blobId": info["sha1"]})
                    if info["lfs"]:
                        s["lfs"] = {"sha256": info["sha256"], "size": info["size"], "pointerSize": LFS_POINTER_SIZE}
                siblings.append(s)
            mtime = iso(os.stat(commit_dir).st_mtime)
            gated = store.repo_meta(repo_dir).get("gated")
            return {"_id": hashlib.sha1(repo_id.encode()).hexdigest()[:24], "id": repo_id, "modelId": repo_id,
                    "author": repo_id.split("/")[0], "sha": commit, "lastModified": mtime, "createdAt": mtime,
                    "private": False, "gated": "manual" if gated else False, "disabled": False, "downloads": 0,
                    "likes": 0, "tags": [], "library_name": "transformers", "siblings": siblings, "usedStorage": used}

        def tree(self, repo_id, repo_dir, commit, under, query, head):
            recursive = query.get("recursive", ["false"])[0].lower() == "true"
            commit_dir = os.path.join(repo_dir, commit)
            base = os.path.join(commit_dir, under) if under else commit_dir
            if under and not os.path.isdir(base):
                raise HubError(404, "EntryNotFound", "%s does not exist on %s" % (under, commit), {"X-Repo-Commit": commit})
            entries = []
            dirs_seen = set()
            for rel in store.files(commit_dir):
                if under and not rel.startswith(under + "/"):
                    continue
                inner = rel[len(under) + 1:] if under else rel
                parts = inner.split("/")
                if len(parts) > 1:
                    for depth in range(1, len(parts) if recursive else 2):
                        d = "/".join(([under] if under else []) + parts[:depth])
                        if d not in dirs_seen:
                            dirs_seen.add(d)
                            entries.append({"type": "directory", "oid": hashlib.sha1(("tree\0%s\0%s" % (commit, d)).encode()).hexdigest(),
                                            "size": 0, "path": d})
                    if not recursive:
                        continue
                info = store.info(os.path.join(commit_dir, rel), rel)
                entry = {"type": "file", "oid": info["sha1"], "size": info["size"], "path": rel}
                if info["lfs"]:
                    sha = info["sha256"]
                    rule = faults.match("tree-sha256", repo_id, rel)
                    if rule:
                        sha = hashlib.sha256(b"reprobench-wrong\0" + sha.encode()).hexdigest()
                        self.record["fault"] = "tree-sha256"
                    entry["lfs"] = {"oid": sha, "size": info["size"], "pointerSize": LFS_POINTER_SIZE}
                entries.append(entry)
            page = faults.page_size()
            headers = {}
            if page:
                cursor = int(query.get("cursor", ["0"])[0] or 0)
                if cursor + page < len(entries):
                    q = {k: v[0] for k, v in query.items()}
                    q["cursor"] = str(cursor + page)
                    host = self.headers.get("Host") or "%s:%d" % self.server.server_address[:2]
                    link = "http://%s%s?%s" % (host, urllib.parse.urlsplit(self.path).path, urllib.parse.urlencode(q))
                    headers["Link"] = '<%s>; rel="next"' % link
                entries = entries[cursor:cursor + page]
            self.send_json(200, entries, head, headers)

        # -- /{repo}/resolve ------------------------------------------------------------------------------

        def resolve(self, repo_id, rev, rel, head):
            self.record["endpoint"] = "resolve"
            self.record["file"] = rel
            d = self.repo(repo_id)
            commit = self.commit(d, rev)
            path = os.path.join(d, commit, *rel.split("/"))
            if ".." in rel.split("/") or not os.path.isfile(path):
                raise HubError(404, "EntryNotFound", "Entry not found", {"X-Repo-Commit": commit})
            info = store.info(path, rel)
            size = info["size"]
            headers = {"X-Repo-Commit": commit, "ETag": '"%s"' % (info["sha256"] if info["lfs"] else info["sha1"]),
                       "Accept-Ranges": "bytes", "Content-Type": "application/octet-stream",
                       "Content-Disposition": 'inline; filename="%s"' % rel.rsplit("/", 1)[-1]}
            if head:
                announced = size
                rule = faults.match("content-length", repo_id, rel)
                if rule:
                    announced = size + rule["delta"]
                    self.record["fault"] = "content-length"
                headers["Content-Length"] = str(announced)
                self.send_head(200, headers)
                return
            start, end, status = 0, size - 1, 200
            wanted = self.headers.get("Range")
            if wanted:
                if faults.match("ignore-range", repo_id, rel):
                    self.record["fault"] = "ignore-range"
                else:
                    r = parse_range(wanted, size)
                    if r == "unsatisfiable":
                        headers["Content-Range"] = "bytes */%d" % size
                        headers["Content-Length"] = "0"
                        self.send_head(416, headers)
                        return
                    if r is not None:
                        start, end, status = r[0], r[1], 206
                        headers["Content-Range"] = "bytes %d-%d/%d" % (start, end, size)
            length = end - start + 1
            headers["Content-Length"] = str(length)
            cut = None
            rule = faults.match("drop", repo_id, rel)
            if rule and start < rule["afterBytes"] <= end:
                rule = faults.match("drop", repo_id, rel, consume=True)
                if rule and start < rule["afterBytes"] <= end:
                    cut = rule["afterBytes"] - start
                    self.record["fault"] = "drop-reset" if rule.get("reset") else "drop"
            self.send_head(status, headers, body_bytes=length if cut is None else cut)
            with open(path, "rb") as f:
                f.seek(start)
                left = length if cut is None else cut
                while left > 0:
                    block = f.read(min(CHUNK, left))
                    if not block:
                        break
                    self.wfile.write(block)
                    left -= len(block)
            if cut is not None:
                self.drop(bool(rule.get("reset")))

        def drop(self, reset):
            self.close_connection = True
            try:
                self.wfile.flush()
                if reset:
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                else:
                    self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        # -- replies --------------------------------------------------------------------------------------

        def send_head(self, status, headers, body_bytes=0):
            self.record["status"] = status
            self.record["bytes"] = body_bytes
            request_log.write(self.record)
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            if self.close_connection:  # the client (or a proxy, as sim-proxy does) asked for Connection: close
                self.send_header("Connection", "close")
            self.end_headers()

        def send_json(self, status, obj, head, headers=None):
            body = json.dumps(obj).encode()
            h = {"Content-Type": "application/json; charset=utf-8", "Content-Length": str(len(body))}
            h.update(headers or {})
            self.send_head(status, h, 0 if head else len(body))
            if not head:
                self.wfile.write(body)

    return Handler


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def read_token(path):
    with open(path, encoding="utf-8") as f:
        token = f.read().strip()
    if not token:
        raise SystemExit("hub: %s is empty" % path)
    return token


def serve(opts):
    if not os.path.isdir(opts.root):
        raise SystemExit("hub: --root %s is not a directory" % opts.root)
    token = read_token(opts.token_file) if opts.token_file else None
    faults = Faults(opts.faults)
    faults.current()
    handler = make_handler(Store(opts.root), faults, RequestLog(opts.log), token)
    httpd = Server((opts.listen, opts.port), handler)
    host, port = httpd.server_address[:2]
    sys.stdout.write("hub: listening on %s:%d (root %s, token %s)\n" % (host, port, opts.root, "required for gated repos" if token else "not checked"))
    sys.stdout.flush()
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


# ---------------------------------------------------------------------------------------------------------
# add-repo


def _fill_safetensors(path, seed):
    """Replaces the data region (after the header) with deterministic pseudo-random bytes."""
    with open(path, "r+b") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        size = os.fstat(f.fileno()).st_size
        f.seek(8 + n)
        rng = random.Random(seed)
        left = size - 8 - n
        while left > 0:
            k = min(1 << 20, left)
            f.write(rng.randbytes(k))
            left -= k


def _copy_sparse_safetensors(src, dst):
    """Header copied, data left as a hole (zeros): as hf_model.py writes shards."""
    size = os.path.getsize(src)
    with open(src, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        f.seek(0)
        head = f.read(8 + n)
    with open(dst, "wb") as out:
        out.write(head)
        out.truncate(size)


def add_repo(root, repo_id, source, fill="zeros", gated=False, ref="main"):
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(NAME_RE.match(p) for p in parts):
        raise SystemExit("hub: --repo must be ORG/NAME, got %r" % repo_id)
    if not os.path.isdir(source):
        raise SystemExit("hub: --from %s is not a directory" % source)
    repo_dir = os.path.join(root, parts[0], parts[1])
    os.makedirs(repo_dir, exist_ok=True)
    tmp = os.path.join(repo_dir, ".tmp-%d" % os.getpid())
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    rels = []
    for base, dirs, names in os.walk(source):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for n in sorted(names):
            if n.startswith(".") and n != ".gitattributes":
                continue  # .reprobench-model.json stamps and the like are not repo content
            rels.append(os.path.relpath(os.path.join(base, n), source).replace(os.sep, "/"))
    for rel in rels:
        src, dst = os.path.join(source, rel), os.path.join(tmp, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if rel.endswith(".safetensors"):
            _copy_sparse_safetensors(src, dst)
            if fill == "random":
                _fill_safetensors(dst, hashlib.sha256(("%s\0%s" % (repo_id, rel)).encode()).digest())
        else:
            shutil.copyfile(src, dst)
    if ".gitattributes" not in rels:
        with open(os.path.join(tmp, ".gitattributes"), "w", encoding="utf-8") as f:
            f.write(GITATTRIBUTES)
    files = []
    h = hashlib.sha1(("commit\0%s\0" % repo_id).encode())
    for rel in Store.files(tmp):
        p = os.path.join(tmp, rel)
        size = os.path.getsize(p)
        entry = {"path": rel, "size": size, "sha256": file_sha256(p), "gitSha1": git_blob_sha1(p, size), "lfs": is_lfs(rel, size)}
        files.append(entry)
        h.update(("%s\0%s\0" % (rel, entry["gitSha1"])).encode())
    revision = h.hexdigest()
    final = os.path.join(repo_dir, revision)
    if os.path.isdir(final):
        shutil.rmtree(tmp)
        changed = False
    else:
        os.rename(tmp, final)
        changed = True
    for base, dirs, names in os.walk(final):
        os.chmod(base, 0o755)
        for n in names:
            os.chmod(os.path.join(base, n), 0o644)
    meta = Store.repo_meta(repo_dir)
    meta.setdefault("refs", {})[ref] = revision
    meta["gated"] = bool(gated)
    with open(os.path.join(repo_dir, "repo.json.tmp"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
    os.replace(os.path.join(repo_dir, "repo.json.tmp"), os.path.join(repo_dir, "repo.json"))
    return {"repo": repo_id, "revision": revision, "gated": bool(gated), "changed": changed, "files": files}


def main(argv=None):
    p = argparse.ArgumentParser(prog="hub.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--root", required=True)
    s.add_argument("--listen", default="127.0.0.1")
    s.add_argument("--port", type=int, default=0, help="0: any free port (printed)")
    s.add_argument("--token-file", help="file holding the token gated repos need (never on argv)")
    s.add_argument("--faults", help="JSON faults file, read at every request")
    s.add_argument("--log", help="JSON-lines request log (appended)")
    a = sub.add_parser("add-repo")
    a.add_argument("--root", required=True)
    a.add_argument("--repo", required=True)
    a.add_argument("--from", dest="source", required=True)
    a.add_argument("--fill", choices=["zeros", "random"], default="zeros", help="safetensors data: a hole, or deterministic random bytes")
    a.add_argument("--gated", action="store_true")
    a.add_argument("--ref", default="main")
    opts = p.parse_args(argv)
    if opts.command == "serve":
        return serve(opts)
    print(json.dumps(add_repo(opts.root, opts.repo, opts.source, opts.fill, opts.gated, opts.ref)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
