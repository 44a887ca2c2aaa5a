"""A scripted HTTP server on loopback for the unit tests: each request gets the
next answer of its script, and every request is recorded (method, path,
headers, body). Answers that never come (``hang``) or come too slowly
(``trickle``) wait on an event that ``close()`` sets, so no test waits for a
fixed time."""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Mapping, Optional

Answer = Callable[["_Handler", threading.Event], None]


@dataclass
class Recorded:
    method: str
    path: str
    headers: Dict[str, str]
    """Lower-cased names."""
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))


def answer(status: int, body: Any = None, headers: Optional[Mapping[str, str]] = None, raw: Optional[bytes] = None,
           content_type: str = "application/json") -> Answer:
    """A whole answer: ``body`` as JSON (or ``raw`` bytes), ``X-Request-Id: req_stub`` unless given."""
    payload = raw if raw is not None else json.dumps(body).encode("utf-8")

    def send(handler: _Handler, _released: threading.Event) -> None:
        handler.send_response(status)
        all_headers = {"Content-Type": content_type, "X-Request-Id": "req_stub", **(headers or {})}
        for name, value in all_headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    return send


def envelope(status: int, code: str, headers: Optional[Mapping[str, str]] = None,
             request_id: Optional[str] = None) -> Answer:
    """The API's error envelope."""
    body = {"error": {"code": code, "message": f"{code}.", "request_id": request_id or f"req_{code}"}}
    return answer(status, body, headers)


def hang(_handler: _Handler, released: threading.Event) -> None:
    """Never answers (until the stub closes)."""
    released.wait(30)


def trickle(handler: _Handler, released: threading.Event) -> None:
    """Headers at once, then one byte of the body every 20 ms, never finishing (until the stub closes)."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "1000000")
    handler.end_headers()
    handler.wfile.flush()
    try:
        while not released.wait(0.02):
            handler.wfile.write(b" ")
            handler.wfile.flush()
    except OSError:
        pass


def drop(handler: _Handler, _released: threading.Event) -> None:
    """Closes the connection without a byte of answer."""
    handler.close_connection = True
    try:
        handler.connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class _Handler(BaseHTTPRequestHandler):
    server: _Server  # pyright: ignore[reportIncompatibleVariableOverride]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        stub = self.server.stub
        with stub.lock:
            stub.requests.append(
                Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            next_answer = stub.script.pop(0) if stub.script else None
        if next_answer is None:
            envelope(599, "stub_script_exhausted")(self, stub.released)
            return
        next_answer(self, stub.released)

    do_GET = _serve
    do_POST = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    stub: StubServer


class StubServer:
    """``with StubServer([answer(201, {...}), ...]) as stub: Client(stub.url)``."""

    def __init__(self, script: List[Answer]) -> None:
        self.script = list(script)
        self.requests: List[Recorded] = []
        self.lock = threading.Lock()
        self.released = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.stub = self
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.daemon = True
        self._thread.start()

    def close(self) -> None:
        self.released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> StubServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def keys(self) -> List[Optional[str]]:
        """The Idempotency-Key of every request, in order."""
        return [request.headers.get("idempotency-key") for request in self.requests]


def closed_port() -> int:
    """A loopback port nothing listens on (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
