"""Where the Go-built servers live: built once per pinned version by stack/build-binaries.sh."""
import hashlib
import re
import shutil
import subprocess
from pathlib import Path

from .config import StackConfig
from .process import StackError, run


def pinned(cfg: StackConfig, wrapper: str, module: str) -> str:
    """The version of ``module`` that ``stack/go/<wrapper>/go.mod`` requires."""
    text = (cfg.root / "stack" / "go" / wrapper / "go.mod").read_text()
    match = re.search(r"^\s*(?:require\s+)?" + re.escape(module) + r"\s+(v\S+)", text, re.M)
    if not match:
        raise StackError(f"{module} is not pinned in stack/go/{wrapper}/go.mod")
    return match.group(1)


KUBE = ("kube", "k8s.io/kubernetes", "kubernetes")
KORC = ("korc", "github.com/k-orc/openstack-resource-controller/v2", "korc")
ESO = ("eso", "github.com/external-secrets/external-secrets", "eso-vault")  # only the providers the stack uses
# the node's (built by `build-binaries.sh node`); the node images' programs are ours: keyed by a source hash
CONTAINERD = ("containerd", "github.com/containerd/containerd/v2", "containerd")
RUNC = ("runc", "github.com/opencontainers/runc", "runc")
CNI = ("cni", "github.com/containernetworking/plugins", "cni-plugins")  # the Pod network's bridge, IPAM, loopback
NODE_IMAGES = ("nodeimages", None, "nodeimages")


def source_hash(folder: Path) -> str:
    """What build-binaries.sh computes for an unversioned wrapper: ``find . -type f | LC_ALL=C sort |
    xargs sha256sum | sha256sum | cut -c1-12`` in ``folder``."""
    files = sorted(("./" + f.relative_to(folder).as_posix() for f in folder.rglob("*") if f.is_file()),
                   key=lambda name: name.encode())
    listing = "".join(f"{hashlib.sha256((folder / name).read_bytes()).hexdigest()}  {name}\n" for name in files)
    return hashlib.sha256(listing.encode()).hexdigest()[:12]


def bin_dir(cfg: StackConfig, part) -> Path:
    wrapper, module, label = part
    if module is None:
        return cfg.cache / "bin" / f"{label}-{source_hash(cfg.root / 'stack' / 'go' / wrapper)}"
    return cfg.cache / "bin" / f"{label}-{pinned(cfg, wrapper, module)}"


def ensure_built(cfg: StackConfig, part, names, script_part: str = "") -> Path:
    """Build the part's binaries unless the cache has them; returns their folder. ``script_part`` is the
    argument of build-binaries.sh that builds them (default: the part's wrapper name)."""
    folder = bin_dir(cfg, part)
    if all((folder / n).exists() for n in names):
        return folder
    run([str(cfg.root / "stack" / "build-binaries.sh"), script_part or part[0]],
        log=cfg.dir("logs") / "build.log", timeout=3600)
    missing = [n for n in names if not (folder / n).exists()]
    if missing:
        raise StackError(f"build of {part[0]} left no {missing} in {folder}")
    return folder


def module_dir(cfg: StackConfig, part) -> Path:
    """The pinned module's source folder in the Go module cache (its CRDs ship there)."""
    wrapper, module, _ = part
    out = subprocess.run(["go", "list", "-m", "-f", "{{.Dir}}", module],
                         cwd=cfg.root / "stack" / "go" / wrapper, capture_output=True, text=True, timeout=600)
    if out.returncode != 0 or not out.stdout.strip():
        raise StackError(f"go list -m {module}: {out.stderr.strip()}")
    return Path(out.stdout.strip())


def kubectl(cfg: StackConfig) -> str:
    """The machine's kubectl, or the one built from the pinned Kubernetes modules."""
    built = bin_dir(cfg, KUBE) / "kubectl"
    if built.exists():
        return str(built)
    found = shutil.which("kubectl")
    if found:
        return found
    run([str(cfg.root / "stack" / "build-binaries.sh"), "kube"], env={"C5C3_BUILD_KUBECTL": "always"},
        log=cfg.dir("logs") / "build.log", timeout=3600)
    return str(built)
