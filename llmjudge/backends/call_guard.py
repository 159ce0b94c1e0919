"""A whole-call deadline and an abort for calls made with a sync HTTP client in a thread pool.

httpx's timeouts are per operation: the read timeout bounds the wait for the *next* bytes, so a
server that drips one byte every few seconds keeps a call alive for as long as it likes (issue 23:
with ``LLM_TIMEOUT=20`` a call lasted 120 s), and a cancelled run's calls ran on. A thread blocked in
``recv`` cannot be cancelled from the event loop either. So the SDK's connection pool is given a
network backend whose streams look up the call their thread is making (a ``CallGuard``, set with
``guarding``) before every connect, read and write:

- each operation's timeout is cut to what is left of the call's deadline, so the whole call
  (connect, send, every byte of the answer) ends at the deadline whatever the server drips;
- ``CallGuard.abort()`` (from any thread: a pause, a cancel, the engine's own deadline) shuts the
  call's socket down, which wakes a blocked ``recv`` at once; the call then fails as a broken
  connection and its thread is free;
- the bytes read are counted, and a call that reads more than ``max_bytes`` (a huge error body the
  SDK reads whole) fails instead of filling the worker's memory.

A socket is shut down only while its call is running: once ``guarding`` ends, an abort does nothing,
so a keep-alive connection that has gone back to the pool (and may serve another call) is never hit.
Django-free: only the standard library and httpcore2 (the SDK's transport).
"""
from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import httpcore2
from httpcore2._backends.sync import SyncBackend

if TYPE_CHECKING:
    import ssl

    import httpx2


class CallGuard:
    """One call's deadline (``time.monotonic()`` seconds), byte budget and socket."""

    def __init__(self, *, deadline: float, max_bytes: int) -> None:
        self.deadline = deadline
        self.max_bytes = max_bytes
        self.bytes_read = 0
        self.aborted = False
        self._running = True
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def attach(self, sock: socket.socket | None) -> None:
        with self._lock:
            if not self._running:
                return
            self._sock = sock
            if self.aborted and sock is not None:
                _shutdown(sock)

    def abort(self) -> None:
        """Stop the call now, from any thread: its blocked read (if any) returns at once."""
        with self._lock:
            self.aborted = True
            if self._running and self._sock is not None:
                _shutdown(self._sock)

    def finish(self) -> None:
        with self._lock:
            self._running = False
            self._sock = None


def _shutdown(sock: socket.socket) -> None:
    # The plain socket's shutdown, also for a TLS socket: SSLSocket.shutdown would drop its SSL object
    # under the reading thread's feet. shutdown (unlike close) keeps the descriptor, so it cannot be reused
    # by another connection while the reading thread still holds it.
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


_current = threading.local()


@contextmanager
def guarding(guard: CallGuard) -> Iterator[CallGuard]:
    """Make ``guard`` the call of this thread for the duration of the block."""
    _current.guard = guard
    try:
        yield guard
    finally:
        _current.guard = None
        guard.finish()


def _guard() -> CallGuard | None:
    guard: CallGuard | None = getattr(_current, "guard", None)
    if guard is not None and guard.aborted:
        raise httpcore2.ReadError("the call was stopped (run paused or cancelled, or past its deadline)")
    return guard


def _left(guard: CallGuard | None, timeout: float | None, error: type[Exception]) -> float | None:
    if guard is None:
        return timeout
    left = guard.remaining()
    if left <= 0:
        raise error("the whole call took longer than its deadline")
    return left if timeout is None else min(timeout, left)


class GuardedStream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        guard = _guard()
        if guard is not None:
            guard.attach(self._inner.get_extra_info("socket"))
        data = self._inner.read(max_bytes, _left(guard, timeout, httpcore2.ReadTimeout))
        if guard is not None:
            if guard.aborted:
                raise httpcore2.ReadError("the call was stopped (run paused or cancelled, or past its deadline)")
            guard.bytes_read += len(data)
            if guard.bytes_read > guard.max_bytes:
                raise httpcore2.ReadError(f"the response is larger than {guard.max_bytes} bytes")
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        guard = _guard()
        if guard is not None:
            guard.attach(self._inner.get_extra_info("socket"))
        self._inner.write(buffer, _left(guard, timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore2.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, _left(_guard(), timeout, httpcore2.ConnectTimeout))
        return GuardedStream(inner)

    def get_extra_info(self, info: str) -> object:
        return self._inner.get_extra_info(info)


class GuardedBackend(httpcore2.NetworkBackend):
    """httpcore2's sync network backend, its streams guarded (see the module docstring)."""

    def __init__(self) -> None:
        self._inner = SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None) -> httpcore2.NetworkStream:
        left = _left(_guard(), timeout, httpcore2.ConnectTimeout)
        return GuardedStream(self._inner.connect_tcp(host, port, left, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None
                            ) -> httpcore2.NetworkStream:
        left = _left(_guard(), timeout, httpcore2.ConnectTimeout)
        return GuardedStream(self._inner.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def guard_transports(client: httpx2.Client) -> int:
    """Give every connection pool of an httpx2 client (its transport and any proxy mounts) the guarded
    network backend; returns how many pools it changed.

    httpx2's transport takes no network backend argument, so the pool's is replaced before its first
    connection (the pool hands it to each connection it creates). ``tests/llmjudge/runs/test_deadlines.py``
    (``test_every_connection_pool_of_the_sdks_client_is_guarded``) fails if a new httpx2 moves it.
    """
    changed = 0
    for transport in (client._transport, *client._mounts.values()):
        pool = getattr(transport, "_pool", None)
        if pool is not None and hasattr(pool, "_network_backend"):
            pool._network_backend = GuardedBackend()
            changed += 1
    return changed
