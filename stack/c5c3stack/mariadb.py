"""MariaDB for Keystone, because only MySQL/MariaDB reproduce production's name comparison.

Keystone on sqlite treats ``José`` and ``jose`` as different users; on MariaDB they conflict, as they do in
production. The database default is ``utf8mb4_general_ci``, but Keystone's migrations create every table
``CHARSET utf8``, so the column names are compared on (``local_user.name``) is ``utf8mb3_general_ci``
(measured; see ``plugins/module_utils/keystoneuser/foldnames.py``). The server comes from Debian
and runs as a plain process (no systemd) with its own data directory under ``<state>/mariadb``,
listening on 127.0.0.1 only; root connects through the stack's own socket.
"""
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .config import HOST, StackConfig
from .process import Service, StackError, log_timing, run, secret_file

DATABASE = "keystone"
USER = "keystone"
COLLATION = "utf8mb4_general_ci"


def _dir(cfg: StackConfig) -> Path:
    return cfg.dir("mariadb")


def _socket(cfg: StackConfig) -> Path:
    return _dir(cfg) / "mariadb.sock"


def server_binary() -> Optional[str]:
    for name in ("mariadbd", "mysqld"):
        sbin = f"/usr/sbin/{name}"  # root's PATH may lack /usr/sbin
        found = shutil.which(name) or (sbin if os.access(sbin, os.X_OK) else None)
        if found:
            return found
    return None


def install(cfg: StackConfig) -> str:
    """Install ``mariadb-server`` from Debian unless present; return the server binary.

    A ``policy-rc.d`` that denies service starts keeps the package from launching a system-wide
    server on port 3306 (only when the machine has none already, as Docker images do)."""
    binary = server_binary()
    if binary:
        return binary
    log = cfg.dir("logs") / "mariadb-install.log"
    policy = Path("/usr/sbin/policy-rc.d")
    own_policy = not policy.exists()
    if own_policy:
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
    try:
        env = {"DEBIAN_FRONTEND": "noninteractive"}
        run(["apt-get", "update", "-q"], env=env, log=log, timeout=300)
        run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "mariadb-server"],
            env=env, log=log, timeout=600)
    finally:
        if own_policy:
            policy.unlink(missing_ok=True)
    binary = server_binary()
    if not binary:
        raise StackError("mariadb-server installed, but no mariadbd/mysqld binary found")
    return binary


def _init_datadir(cfg: StackConfig) -> None:
    """Create the system tables once; a marker tells a finished datadir from an interrupted one."""
    data, marker = _dir(cfg) / "data", _dir(cfg) / "initialised"
    if marker.exists():
        return
    shutil.rmtree(data, ignore_errors=True)
    run(["mariadb-install-db", "--no-defaults", f"--datadir={data}", "--user=root",
         "--auth-root-authentication-method=socket", "--skip-test-db", "--skip-name-resolve"],
        log=cfg.dir("logs") / "mariadb-install-db.log", timeout=300)
    marker.write_text("ok\n")


def _client(cfg: StackConfig, tool: str = "mariadb") -> List[str]:
    return [tool, "--no-defaults", f"--socket={_socket(cfg)}", "--user=root", "--connect-timeout=3"]


def _ping(cfg: StackConfig) -> bool:
    try:
        return subprocess.run(_client(cfg, "mariadb-admin") + ["ping"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=10).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def sql(cfg: StackConfig, statements: str, timeout: float = 60) -> str:
    """Run SQL as root over the stack's socket; the SQL goes in on stdin so secrets stay out of argv."""
    proc = subprocess.run(_client(cfg) + ["--batch", "--skip-column-names"], input=statements.encode(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if proc.returncode != 0:
        raise StackError(f"mariadb: SQL failed: {proc.stderr.decode('utf-8', 'replace')[-2000:]}")
    return proc.stdout.decode()


def service(cfg: StackConfig, binary: Optional[str] = None) -> Service:
    d = _dir(cfg)
    binary = binary or server_binary() or "mariadbd"
    argv = [binary, "--no-defaults", f"--datadir={d / 'data'}", f"--socket={_socket(cfg)}",
            f"--pid-file={d / 'mariadb.pid'}", f"--bind-address={HOST}", f"--port={cfg.port('mariadb')}",
            "--user=root", "--skip-name-resolve", "--character-set-server=utf8mb4",
            f"--collation-server={COLLATION}", "--innodb-buffer-pool-size=64M",
            "--max-connections=100"]
    return Service(cfg, "mariadb", argv, ready=lambda: _ping(cfg), timeout=90)


def password(cfg: StackConfig) -> str:
    return secret_file(_dir(cfg) / "keystone.password")


def database_url(cfg: StackConfig) -> str:
    """SQLAlchemy URL for Keystone (TCP on loopback; utf8mb4 so any Unicode name fits)."""
    return (f"mysql+pymysql://{USER}:{password(cfg)}@{HOST}:{cfg.port('mariadb')}/{DATABASE}"
            "?charset=utf8mb4")


def up(cfg: StackConfig) -> Dict[str, str]:
    """Install, initialise and start MariaDB and make sure the Keystone database and user exist."""
    started = time.monotonic()
    binary = install(cfg)
    _init_datadir(cfg)
    how = service(cfg, binary).ensure()
    pw = password(cfg)  # URL-safe characters only: safe inside SQL quotes and in the URL
    sql(cfg, f"""
CREATE DATABASE IF NOT EXISTS {DATABASE} CHARACTER SET utf8mb4 COLLATE {COLLATION};
CREATE USER IF NOT EXISTS '{USER}'@'{HOST}' IDENTIFIED BY '{pw}';
ALTER USER '{USER}'@'{HOST}' IDENTIFIED BY '{pw}';
GRANT ALL PRIVILEGES ON {DATABASE}.* TO '{USER}'@'{HOST}';
""")
    log_timing(cfg, "mariadb", started, how)
    return {"C5C3_MARIADB_PORT": str(cfg.port("mariadb"))}


def down(cfg: StackConfig, purge: bool = False) -> None:
    """Stop the server (it flushes on SIGTERM); ``purge`` also deletes its data and password."""
    service(cfg).stop(grace=60)
    if purge:
        shutil.rmtree(cfg.state / "mariadb", ignore_errors=True)


def reset(cfg: StackConfig) -> None:
    down(cfg, purge=True)


def status(cfg: StackConfig) -> List[Tuple[str, str, str]]:
    return [service(cfg).status_row(f"{HOST}:{cfg.port('mariadb')}")]
