"""Keystone 30 under gunicorn on the stack's MariaDB.

One gunicorn worker with threads, because the in-memory cache is per process (a second worker could
serve stale identity data). Fernet tokens and bcrypt with 4 rounds keep password auth around 15 ms.
Bootstrapping (schema, keys, admin user, endpoints) happens once per database; a running, healthy
gunicorn is reused.
"""
import grp
import json
import os
import pwd
import shutil
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Dict, List, Tuple

from . import mariadb
from .config import HOST, StackConfig
from .process import Service, StackError, http_ok, log_timing, run, secret_file
from .venv import server_venv

REGION = "RegionOne"
ADMIN_CLOUD = "c5c3-admin"  # system scoped: what tests and admin calls use
KORC_CLOUD = "admin"        # project scoped: what K-ORC (gophercloud) uses

# oslo.config parses sys.argv: under gunicorn every worker would die on gunicorn's own flags.
SHIM = "import sys\nsys.argv = sys.argv[:1]\nfrom keystone.wsgi.api import application  # noqa: E402,F401\n"


def _dir(cfg: StackConfig) -> Path:
    return cfg.dir("keystone")


def _venv(cfg: StackConfig) -> Path:
    return server_venv(cfg)


def auth_url(cfg: StackConfig) -> str:
    return f"http://{HOST}:{cfg.port('keystone')}/v3"


def admin_password(cfg: StackConfig) -> str:
    return secret_file(_dir(cfg) / "admin.password")


def _config(cfg: StackConfig) -> str:
    d = _dir(cfg)
    return f"""[DEFAULT]
log_file = {cfg.dir('logs') / 'keystone-app.log'}
[database]
connection = {mariadb.database_url(cfg)}
[token]
provider = fernet
[fernet_tokens]
key_repository = {d / 'fernet-keys'}
[fernet_receipts]
key_repository = {d / 'fernet-keys'}
[credential]
key_repository = {d / 'credential-keys'}
[identity]
password_hash_algorithm = bcrypt
password_hash_rounds = 4
[cache]
enabled = true
backend = dogpile.cache.memory
"""


def _write_private(path: Path, text: str) -> bool:
    """Write ``text`` with mode 0600; True when the content changed."""
    if path.exists() and path.read_text() == text:
        return False
    secret_file(path, text.rstrip("\n"))
    return True


def _bootstrapped(cfg: StackConfig) -> bool:
    """The database has the admin user and the keys and password it was bootstrapped with exist."""
    d = _dir(cfg)
    if not ((d / "fernet-keys" / "0").exists() and (d / "credential-keys" / "0").exists()
            and (d / "admin.password").exists()):
        return False
    try:
        out = mariadb.sql(cfg, "SELECT COUNT(*) FROM keystone.local_user "
                               "WHERE name='admin' AND domain_id='default';")
    except StackError:  # no schema yet
        return False
    return out.strip() == "1"


def _bootstrap(cfg: StackConfig, conf: Path) -> None:
    d, venv = _dir(cfg), _venv(cfg)
    manage = [str(venv / "bin" / "keystone-manage"), "--config-file", str(conf)]
    owner = ["--keystone-user", pwd.getpwuid(os.getuid()).pw_name,
             "--keystone-group", grp.getgrgid(os.getgid()).gr_name]
    log = cfg.dir("logs") / "keystone-manage.log"
    run(manage + ["db_sync"], log=log, timeout=600)
    for kind in ("fernet", "credential"):
        if not (d / f"{kind}-keys" / "0").exists():
            (d / f"{kind}-keys").mkdir(mode=0o700, exist_ok=True)
            run(manage + [f"{kind}_setup"] + owner, log=log, timeout=300)
    url = auth_url(cfg)
    run(manage + ["bootstrap"], log=log, timeout=300, env={  # the password goes via env, never argv
        "OS_BOOTSTRAP_PASSWORD": admin_password(cfg), "OS_BOOTSTRAP_REGION_ID": REGION,
        "OS_BOOTSTRAP_ADMIN_URL": url, "OS_BOOTSTRAP_INTERNAL_URL": url, "OS_BOOTSTRAP_PUBLIC_URL": url})


def service(cfg: StackConfig) -> Service:
    d = _dir(cfg)
    venv = _venv(cfg)
    argv = [str(venv / "bin" / "gunicorn"), "--chdir", str(d), "--bind", f"{HOST}:{cfg.port('keystone')}",
            "--workers", "1", "--threads", "4", "--timeout", "60", "--graceful-timeout", "5",
            "--control-socket", str(d / "gunicorn.ctl"), "ks_wsgi:application"]
    return Service(cfg, "keystone", argv, ready=lambda: http_ok(auth_url(cfg), timeout=3),
                   env={"OS_KEYSTONE_CONFIG_FILES": str(d / "keystone.conf")}, cwd=d, timeout=120)


def _probe(cfg: StackConfig) -> Service:
    """The service for stop/status only: no venv needed to stop or look at a process."""
    return Service(cfg, "keystone", [], ready=lambda: http_ok(auth_url(cfg), timeout=3))


def cloud_entry(cfg: StackConfig, name: str = KORC_CLOUD) -> dict:
    """One clouds.yaml entry: ``c5c3-admin`` (system scope) or ``admin`` (project ``admin``)."""
    auth = {"auth_url": auth_url(cfg), "username": "admin", "password": admin_password(cfg),
            "user_domain_name": "Default"}
    if name == ADMIN_CLOUD:
        auth["system_scope"] = "all"
    else:
        auth.update(project_name="admin", project_domain_name="Default")
    entry = {"auth": auth, "region_name": REGION, "interface": "internal",
             "identity_api_version": 3}
    if name != ADMIN_CLOUD:
        entry["endpoint_type"] = "internal"  # gophercloud's clientconfig reads either key
    return entry


def admin_cloud(cfg: StackConfig) -> dict:
    """The project-scoped ``admin`` entry for K-ORC's credentials Secret: the auth dict is under
    ``"auth"``, next to ``region_name``, ``interface`` and ``identity_api_version``."""
    return cloud_entry(cfg, KORC_CLOUD)


def _yaml(data: dict, indent: int = 0) -> List[str]:
    """A tiny YAML writer (JSON scalars are valid YAML) so the stack tool needs no PyYAML."""
    lines = []
    for key, value in data.items():
        if isinstance(value, dict):
            lines += [" " * indent + f"{key}:"] + _yaml(value, indent + 2)
        else:
            lines.append(" " * indent + f"{key}: {json.dumps(value)}")
    return lines


def clouds_file(cfg: StackConfig) -> Path:
    return _dir(cfg) / "clouds.yaml"


def _token_ok(cfg: StackConfig) -> bool:
    """The admin can get a system-scoped token: proves DB, keys and password all fit together."""
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"name": "Default"}, "password": admin_password(cfg)}}},
        "scope": {"system": {"all": True}}}}
    req = urllib.request.Request(auth_url(cfg) + "/auth/tokens", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=15) as resp:
            return resp.status == 201
    except (urllib.error.URLError, OSError):
        return False


def up(cfg: StackConfig) -> Dict[str, str]:
    """Bootstrap once, start (or reuse) gunicorn, write clouds.yaml; return the OS_* variables."""
    started = time.monotonic()
    mariadb.up(cfg)  # idempotent and cheap; Keystone cannot start without its database
    d = _dir(cfg)
    conf = d / "keystone.conf"
    changed = _write_private(conf, _config(cfg))
    (d / "ks_wsgi.py").write_text(SHIM)
    if not _bootstrapped(cfg):
        _bootstrap(cfg, conf)
        changed = True
    svc = service(cfg)
    if changed:  # a running server would keep old settings or a stale cache
        svc.stop()
    how = svc.ensure()
    if not _token_ok(cfg):
        raise StackError(f"keystone: admin password auth fails; see {cfg.dir('logs') / 'keystone-app.log'}")
    clouds = {"clouds": {name: cloud_entry(cfg, name) for name in (ADMIN_CLOUD, KORC_CLOUD)}}
    _write_private(clouds_file(cfg), "\n".join(_yaml(clouds)) + "\n")
    log_timing(cfg, "keystone", started, how)
    return {"OS_CLIENT_CONFIG_FILE": str(clouds_file(cfg)), "OS_CLOUD": ADMIN_CLOUD,
            "OS_AUTH_URL": auth_url(cfg)}


def down(cfg: StackConfig, purge: bool = False) -> None:
    """Stop gunicorn (not MariaDB); ``purge`` also forgets keys, password and the bootstrap."""
    _probe(cfg).stop()
    if purge:
        shutil.rmtree(cfg.state / "keystone", ignore_errors=True)
        if (cfg.state / "mariadb" / "initialised").exists() and mariadb.status(cfg)[0][1] == "up":
            mariadb.sql(cfg, "DROP DATABASE IF EXISTS keystone;")


def reset(cfg: StackConfig) -> None:
    down(cfg, purge=True)


def status(cfg: StackConfig) -> List[Tuple[str, str, str]]:
    return [_probe(cfg).status_row(auth_url(cfg))]
