"""A real PostgreSQL server for the distributed tests, started and stopped by the tests.

The server comes from Debian's ``postgresql`` package (``/usr/lib/postgresql/<N>/bin``).
``initdb`` refuses to run as root, so when the tests run as root the server runs as the
``postgres`` user (``runuser``). It listens on 127.0.0.1 on a free port, with its socket in
a private temporary folder; TCP logins need a password (SCRAM), so the tests exercise the
real way credentials reach a worker: ``PGPASSWORD`` in the environment, never in the URL.
Without the binaries (or the user) the tests are skipped with the reason.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

USER = "bracket"


@dataclass(frozen=True)
class PgServer:
    host: str
    port: int
    socket_dir: str
    password: str

    def url(self, database: str) -> str:
        """The SQLAlchemy URL of ``database`` — without the password (it goes in PGPASSWORD)."""
        return f"postgresql+psycopg://{USER}@{self.host}:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(host=self.socket_dir, port=self.port, user="postgres", dbname="postgres",
                             autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}" OWNER {USER}')
        return self.url(name)


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def postgres() -> Iterator[PgServer]:
    bin_dir = _pg_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL server binaries not found (apt-get install postgresql)")
    prefix: list[str] = []
    owner = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run initdb as")
        if not shutil.which("runuser"):
            pytest.skip("running as root and runuser is missing")
        prefix = ["runuser", "-u", "postgres", "--"]
    base = Path(tempfile.mkdtemp(prefix="bracket-pg-"))
    data, sockets = base / "data", base / "sock"
    data.mkdir()
    sockets.mkdir()
    if owner is not None:
        os.chmod(base, 0o755)
        for path in (base, data, sockets):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    port = _free_port()
    password = secrets.token_hex(12)
    pg_ctl = [*prefix, str(bin_dir / "pg_ctl"), "-D", str(data)]
    started = False
    try:
        subprocess.run([*prefix, str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-E", "UTF8",
                        "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync"],
                       check=True, capture_output=True, timeout=120)
        options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        start = subprocess.run([*pg_ctl, "-l", str(base / "server.log"), "-w", "-t", "60", "-o", options, "start"],
                               check=False, capture_output=True, text=True, timeout=90)
        if start.returncode != 0:
            log = (base / "server.log").read_text(errors="replace") if (base / "server.log").is_file() else ""
            raise RuntimeError(f"PostgreSQL did not start: {start.stdout}{start.stderr}{log}")
        started = True
        import psycopg

        with psycopg.connect(host=str(sockets), port=port, user="postgres", dbname="postgres",
                             autocommit=True) as connection:
            connection.execute(f"CREATE ROLE {USER} LOGIN PASSWORD '{password}'")
        yield PgServer("127.0.0.1", port, str(sockets), password)
    finally:
        if started:
            subprocess.run([*pg_ctl, "stop", "-m", "immediate"], capture_output=True, timeout=60, check=False)
        shutil.rmtree(base, ignore_errors=True)
