"""An S3-compatible object store on loopback for the tests: moto's standalone server (in its own
virtual environment, `.venv-moto`, made by `make test`: moto pins python-dateutil below 3, which
the project's environment is past), and a proxy in front of it that adds latency and the faults
object stores really show: 503 SlowDown, and connections reset before an answer."""

from __future__ import annotations

import asyncio
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
from http import HTTPStatus
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
    and its connection reset when n % reset_every == 0 (0: never). It counts the requests waiting
    at once."""

    latency: float = 0.0
    slow_down_every: int = 0
    reset_every: int = 0
    # Answer reads again from memory once fetched (the bench: moto itself serves about 40 files/s
    # here, so without this the bench would time moto, not the reader).
    cache_reads: bool = False
    cached: dict[tuple[str, str, str], tuple[int, list[tuple[str, str]], bytes]] = field(default_factory=dict)
    requests: int = 0
    in_flight: int = 0  # requests waiting out their latency now
    peak: int = 0  # the most ever at once: how many connections the reader really uses
    injected: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def arrived(self) -> None:
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)

    def next(self) -> str | None:
        with self.lock:
            self.in_flight -= 1
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
    endpoint. It runs in a thread of this process, so `faults` counts what it did."""
    listener = _listener()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=_serve, args=(loop, listener, upstream, faults), daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        listener.close()


@contextmanager
def proxy_process(upstream: str, faults: Faults) -> Iterator[str]:
    """`faulty_proxy` in a process of its own (forked), as a store across a network is: its work
    does not compete with the reader's for this process's interpreter lock."""
    listener = _listener()
    child = multiprocessing.get_context("fork").Process(
        target=_serve, args=(None, listener, upstream, faults), daemon=True)
    child.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        child.terminate()
        child.join(30)
        listener.close()


def _listener() -> socket.socket:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1024)  # as many connections as the readers open at once
    return listener


def _serve(loop: asyncio.AbstractEventLoop | None, listener: socket.socket, upstream: str,
           faults: Faults) -> None:
    """Serve the proxy on `listener` until the loop is stopped. One event loop, not a thread a
    connection: Python's threaded HTTP server costs about 1.5 ms of CPU a request, which capped the
    bench near 300 files/s whatever the reader did."""
    loop = loop or asyncio.new_event_loop()
    asyncio.set_event_loop(loop)

    async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _connection(reader, writer, upstream, faults)

    server = loop.run_until_complete(asyncio.start_server(connected, sock=listener))
    try:
        loop.run_forever()
    finally:  # end the connections still open before the loop closes
        server.close()
        connections = asyncio.all_tasks(loop)
        for task in connections:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*connections, return_exceptions=True))
        loop.close()


async def _connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, upstream: str,
                      faults: Faults) -> None:
    """Requests on one kept-alive connection, each answered after `faults.latency`."""
    try:
        while True:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            command, target, _ = head[0].split(" ", 2)
            fields = (line.partition(":") for line in head[1:] if line)
            headers = [(k.strip(), v.strip()) for k, _, v in fields]
            named = {k.lower(): v for k, v in headers}
            body = await reader.readexactly(int(named.get("content-length") or 0))
            faults.arrived()
            await asyncio.sleep(faults.latency)
            fault = faults.next()
            if fault == "reset":
                # linger 0: close sends a TCP reset, as a dropped connection does
                writer.get_extra_info("socket").setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
                return
            if fault == "503":
                writer.write(_answer(503, [("Content-Type", "application/xml")], SLOW_DOWN, len(SLOW_DOWN)))
                await writer.drain()
                continue
            key = (command, target, named.get("range", ""))
            found = faults.cached.get(key) if faults.cache_reads else None
            if found is None:
                found = await asyncio.get_running_loop().run_in_executor(
                    None, _upstream, upstream, command, target, headers, body)
                if faults.cache_reads and command in ("GET", "HEAD") and found[0] < 300:
                    faults.cached[key] = found
            status, answer_headers, data = found
            # A HEAD answer has no body but says the object's length.
            length = int(dict(answer_headers).get("Content-Length", "0")) if command == "HEAD" else len(data)
            writer.write(_answer(status, answer_headers, b"" if command == "HEAD" else data, length))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass  # the client closed its connection
    finally:
        writer.close()


HOP_BY_HOP = ("connection", "transfer-encoding", "content-length", "date", "server")


def _answer(status: int, headers: list[tuple[str, str]], body: bytes, length: int) -> bytes:
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
    lines += [f"{k}: {v}" for k, v in headers if k.lower() not in HOP_BY_HOP]
    lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _upstream(upstream: str, command: str, target: str, headers: list[tuple[str, str]],
              body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    host, port = upstream.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.request(command, target, body=body or None,
                     headers={k: v for k, v in headers if k.lower() != "connection"})
        answer = conn.getresponse()
        return answer.status, answer.getheaders(), answer.read()
    finally:
        conn.close()
