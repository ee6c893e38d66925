"""An S3-compatible object store on loopback for the tests: moto's standalone server (in its own
virtual environment, `.venv-moto`, made by `make test`: moto pins python-dateutil below 3, which
the project's environment is past), and a proxy in front of it that adds latency and the faults
object stores really show: 503 SlowDown, and connections reset before an answer."""

from __future__ import annotations

import http.client
import multiprocessing
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MOTO_SERVER = Path(__file__).resolve().parent.parent / ".venv-moto" / "bin" / "moto_server"
KEY, SECRET = "schemaguard-test-key", "schemaguard-test-secret-never-shown"  # moto accepts any
SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
             b"<Message>Please reduce your request rate.</Message></Error>")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def moto_server() -> Iterator[str]:
    """moto's S3 on a free loopback port; yields its endpoint `127.0.0.1:PORT`."""
    if not MOTO_SERVER.exists():
        raise RuntimeError(f"{MOTO_SERVER} is missing: `make test` (or `make .venv-moto`) installs it")
    port = _free_port()
    server = subprocess.Popen([str(MOTO_SERVER), "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("moto's server did not start") from None
                time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


@dataclass
class Faults:
    """What the proxy does to requests: every request waits `latency` seconds; request number n
    (counted from 1 over the proxy's life) gets a 503 SlowDown when n % slow_down_every == 0,
    and its connection reset when n % reset_every == 0 (0: never)."""

    latency: float = 0.0
    slow_down_every: int = 0
    reset_every: int = 0
    # Answer reads again from memory once fetched (the bench: moto itself serves about 40 files/s
    # here, so without this the bench would time moto, not the reader).
    cache_reads: bool = False
    cached: dict[tuple[str, str, str], tuple[int, list[tuple[str, str]], bytes]] = field(default_factory=dict)
    requests: int = 0
    injected: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self) -> str | None:
        with self.lock:
            self.requests += 1
            n = self.requests
        if self.reset_every and n % self.reset_every == 0:
            self.injected.append("reset")
            return "reset"
        if self.slow_down_every and n % self.slow_down_every == 0:
            self.injected.append("503")
            return "503"
        return None


@contextmanager
def faulty_proxy(upstream: str, faults: Faults) -> Iterator[str]:
    """An HTTP proxy to `upstream` on a free loopback port that applies `faults`; yields its
    endpoint. It runs in this process's threads, so `faults` counts what it did."""
    server = _proxy_server(upstream, faults)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def proxy_process(upstream: str, faults: Faults) -> Iterator[str]:
    """`faulty_proxy` in a process of its own (forked), as a store across a network is: its work
    does not compete with the reader's for this process's interpreter lock."""
    server = _proxy_server(upstream, faults)
    child = multiprocessing.get_context("fork").Process(target=server.serve_forever, daemon=True)
    child.start()
    server.server_close()  # the child holds the listening socket
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        child.terminate()
        child.join(30)


def _proxy_server(upstream: str, faults: Faults) -> ThreadingHTTPServer:
    host, port = upstream.split(":")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            time.sleep(faults.latency)
            fault = faults.next()
            if fault == "reset":
                # linger 0: close sends a TCP reset, as a dropped connection does
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
                return
            if fault == "503":
                self.send_response(503)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(SLOW_DOWN)))
                self.end_headers()
                self.wfile.write(SLOW_DOWN)
                return
            key = (self.command, self.path, self.headers.get("Range", ""))
            found = faults.cached.get(key) if faults.cache_reads else None
            if found is None:
                found = self._upstream(body)
                if faults.cache_reads and self.command in ("GET", "HEAD") and found[0] < 300:
                    faults.cached[key] = found
            status, headers, data = found
            self.send_response(status)
            for k, v in headers:
                if k.lower() not in ("connection", "transfer-encoding", "content-length", "date", "server"):
                    self.send_header(k, v)
            # A HEAD answer has no body but says the object's length.
            self.send_header("Content-Length", dict(headers).get("Content-Length", "0")
                             if self.command == "HEAD" else str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _upstream(self, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
            conn = http.client.HTTPConnection(host, int(port), timeout=60)
            try:
                conn.request(self.command, self.path, body=body or None,
                             headers={k: v for k, v in self.headers.items() if k.lower() != "connection"})
                answer = conn.getresponse()
                return answer.status, answer.getheaders(), answer.read()
            finally:
                conn.close()

        do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward

    ThreadingHTTPServer.request_queue_size = 256  # as many connections as the readers open at once
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    return server
