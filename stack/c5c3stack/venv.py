"""Virtual environments for the stack's PyPI servers, cached outside the checkout.

A venv is named after a hash of its requirements file, so changing a pin builds a new venv instead of
mutating one that another checkout may be using; a marker written last tells a finished venv from one
whose install was interrupted.
"""
import fcntl
import hashlib
import shutil
import time
from pathlib import Path

from .config import StackConfig
from .process import log_timing, run

MARKER = ".c5c3-complete"


def venv_path(cfg: StackConfig, name: str, requirements: Path) -> Path:
    digest = hashlib.sha256(Path(requirements).read_bytes()).hexdigest()[:12]
    return cfg.cache / f"venv-{name}-{digest}"


def ensure_venv(cfg: StackConfig, name: str, requirements: Path, timeout: float = 900) -> Path:
    """Return a complete venv with ``requirements`` installed, building it only when missing."""
    path = venv_path(cfg, name, requirements)
    if (path / MARKER).exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / f".{path.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two parts (or checkouts) may ask for the same venv at once
        if (path / MARKER).exists():
            return path
        started = time.monotonic()
        shutil.rmtree(path, ignore_errors=True)  # a half-built venv from an interrupted run
        log = cfg.dir("logs") / f"venv-{name}.log"
        run(["python3", "-m", "venv", str(path)], log=log, timeout=120)
        hashes = ["--require-hashes"] if requirements.suffix == ".lock" else []  # make locks writes the hashes
        run([str(path / "bin" / "pip"), "install", "-q", *hashes, "-r", str(requirements)],
            env={"PIP_DISABLE_PIP_VERSION_CHECK": "1"}, log=log, timeout=timeout)
        (path / MARKER).write_text(str(requirements) + "\n")
        log_timing(cfg, f"venv-{name}", started, "built")
    return path


def server_requirements(cfg: StackConfig) -> Path:
    """The lock of the servers' venv: Keystone and OpenBao run from one."""
    return cfg.root / "requirements" / "server.lock"


def server_venv(cfg: StackConfig) -> Path:
    return ensure_venv(cfg, "server", server_requirements(cfg))


def venv_python(path: Path) -> str:
    return str(path / "bin" / "python")
