"""An aiohttp application served from a background thread on 127.0.0.1.

Tests and benchmarks use it as a context manager; the port is chosen by the
operating system, so parallel test runs never collide.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aiohttp import web


class BackgroundServer:
    """Subclasses implement :meth:`routes`; ``url`` is ``http://127.0.0.1:PORT``."""

    host = "127.0.0.1"

    def __init__(self) -> None:
        self.port: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    def routes(self) -> list[web.RouteDef]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the server is not running; use it as a context manager or call start()")
        return f"http://{self.host}:{self.port}"

    def start(self) -> BackgroundServer:
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._serve, name=type(self).__name__, daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise RuntimeError(f"test server failed to start: {self._error}") from self._error
        if self.port is None:
            raise RuntimeError("test server did not start within 30 s")
        return self

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        future = asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
        try:
            future.result(10)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._thread = None
            self.port = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._startup())
        except BaseException as exc:  # reported to start()
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    async def _startup(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.add_routes(self.routes())
        # Injected faults (dropped connections) make aiohttp log noise that is expected here.
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, handler_cancellation=True, shutdown_timeout=0.5
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0, backlog=1024)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def _shutdown(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def quiet_aiohttp_logs() -> None:
    """Silence aiohttp's server error log: injected faults are expected, not bugs."""
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)


def serve_until_terminated(server: BackgroundServer) -> None:
    """Serve in this process until SIGTERM or Ctrl-C; the first line printed is the port, for
    tests that start the server in a process of its own (so they can kill a client, not it)."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with server:
        print(f"port {server.port}", flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass


@contextmanager
def spawned(command: list[str], what: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """Start a server run by :func:`serve_until_terminated` in a process of its own;
    yield the process and its port; stop it with SIGTERM (then kill) on leaving."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("port "):
            raise RuntimeError(f"{what} did not start: {line!r}")
        yield process, int(line.split()[1])
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
