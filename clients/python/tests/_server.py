"""The real simdex server the tests talk to, started once per test process.

The binary is $SIMDEX_SERVER_BIN, or ./cmd/server of the repository built
with `go build` into a temporary directory. It serves on a free loopback
port over an embedded store in a temporary directory, with an API key, and
is stopped when the process exits.
"""

from __future__ import annotations

import atexit
import http.client
import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from typing import Callable, Optional
from urllib.parse import urlsplit

API_KEY = "python-client-test-key-0123"

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_url: Optional[str] = None
_lock = threading.Lock()


def url() -> str:
    """The server's base URL, starting it on first use."""
    global _url
    with _lock:
        if _url is None:
            _url = _start()
        return _url


def _start() -> str:
    tmp = tempfile.mkdtemp(prefix="simdex-py-client-")
    atexit.register(shutil.rmtree, tmp, True)
    binary = os.environ.get("SIMDEX_SERVER_BIN")
    if not binary:
        binary = os.path.join(tmp, "server")
        subprocess.run(["go", "build", "-o", binary, "./cmd/server"], cwd=_REPO, check=True)
    log_path = os.path.join(tmp, "server.log")
    # The server reads SIMDEX_* variables; the tests' own must not reach it.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIMDEX_")}
    args = [binary, "--addr", "127.0.0.1:0", "--data-dir", os.path.join(tmp, "data"), "--api-keys", API_KEY]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            args + ["--log-format", "json", "--log-level", "info"], stdout=subprocess.DEVNULL, stderr=log, env=env
        )

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    atexit.register(stop)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {_tail(log_path)}")
        with open(log_path, "rb") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("msg") == "serving" and rec.get("addr"):
                    return "http://" + rec["addr"]
        time.sleep(0.1)
    raise RuntimeError(f"server did not start within 180 s: {_tail(log_path)}")


def _tail(path: str) -> str:
    with open(path, "rb") as f:
        return f.read()[-2000:].decode("utf-8", "replace")


class FaultProxy:
    """A loopback HTTP proxy to the test server: fault(n, handler) is asked
    first about the n-th request (from 1) and answers it when it returns
    True; otherwise the request is forwarded."""

    def __init__(self, fault: Callable[[int, http.server.BaseHTTPRequestHandler], bool]) -> None:
        target = urlsplit(url())
        self.requests = 0
        counter_lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _handle(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else None
                with counter_lock:
                    proxy.requests += 1
                    count = proxy.requests
                if fault(count, self):
                    return
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_POST = do_DELETE = _handle

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


STORE_DOWN = (
    b'{"type":"urn:simdex:problem:store-unavailable","title":"Store unavailable","status":503,'
    b'"detail":"the index store is unavailable; retry later","kind":"store-unavailable"}'
)


def unavailable(h: http.server.BaseHTTPRequestHandler, retry_after: Optional[str]) -> bool:
    """Answers 503 with the server's problem (and Retry-After)."""
    h.send_response(503)
    if retry_after is not None:
        h.send_header("Retry-After", retry_after)
    h.send_header("Content-Type", "application/problem+json; charset=utf-8")
    h.send_header("Content-Length", str(len(STORE_DOWN)))
    h.end_headers()
    h.wfile.write(STORE_DOWN)
    return True


def hang_up(h: http.server.BaseHTTPRequestHandler) -> bool:
    """Closes the connection without an answer."""
    h.close_connection = True
    h.connection.shutdown(2)
    return True
