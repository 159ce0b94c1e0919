"""Private Redis and PostgreSQL servers that a fault test may kill and restart.

Other developers share the machine's PostgreSQL and Redis: a test must never stop those. These run
on a free port, in a temporary directory, and belong to the test that started them.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PG_BIN = Path(os.environ.get("EVALHUB_PG_BIN", "/usr/lib/postgresql/15/bin"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, timeout: float, up: bool = True) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                if up:
                    return
        except OSError:
            if not up:
                return
        time.sleep(0.05)
    raise TimeoutError(f"port {port} still {'closed' if up else 'open'} after {timeout} s")


def redis_available() -> bool:
    return shutil.which("redis-server") is not None


def postgres_available() -> bool:
    return (PG_BIN / "initdb").exists() and (os.geteuid() != 0 or shutil.which("runuser") is not None)


class PrivateRedis:
    """A redis-server on a free port; ``restart()`` kills it (SIGKILL) and starts it again.

    Without ``appendonly`` a restart loses everything (queued messages too), as a Redis without
    persistence does; with it, an AOF fsynced on every write survives the kill.
    """

    def __init__(self, *, appendonly: bool = False) -> None:
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="wt8c-redis-")
        self.appendonly = appendonly
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--dir", self.dir]
        args += ["--appendonly", "yes", "--appendfsync", "always"] if self.appendonly else ["--appendonly", "no"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_port(self.port, 10)

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        _wait_port(self.port, 10, up=False)

    def restart(self, down_seconds: float = 0.0) -> None:
        self.kill()
        time.sleep(down_seconds)
        self.start()

    def __enter__(self) -> PrivateRedis:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class PrivatePostgres:
    """A PostgreSQL 15 cluster in a temporary directory, trust auth, on a free port.

    As root, ``initdb`` refuses to run: the cluster then belongs to the ``postgres`` user.
    """

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="wt8c-pg-"))
        self.data = self.dir / "data"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        cmd = [str(PG_BIN / args[0]), *args[1:]]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=60)

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def url_for(self, name: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def init(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")

    def start(self) -> None:
        opts = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-o", opts, "-l", str(self.dir / "log"), "-w", "start")
        _wait_port(self.port, 10)

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)

    def createdb(self, name: str) -> None:
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)

    def __enter__(self) -> PrivatePostgres:
        self.init()
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
