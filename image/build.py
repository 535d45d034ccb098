#!/usr/bin/env python3
"""make image: the OCI image of the controller and the collection, built here without a registry or Docker.

    python3 image/build.py build --collection build/dist/c5c3-orders-<v>.tar.gz --version <v> --umoci <umoci> \
        --pip <pip of requirements/lock-tools.txt> [--rebuild]           # mk/image.mk: make image
    python3 image/build.py lock-debian   # image/debian.lock from what Debian serves now (make image-lock-debian)

Three layers, each a directory assembled here and turned into a layer by ``umoci repack`` (the diff of the bundle's
root filesystem since the previous layer):

1. **debian**: a Debian bookworm root from ``mmdebstrap --variant=essential`` (no apt in the image) with python3,
   ca-certificates and tini, every package pinned to the version ``image/debian.lock`` names (apt preferences; a
   version Debian no longer serves fails the build and says so); docs, man pages and translations left out by dpkg
   path excludes, apt's and dpkg's logs, caches and backups removed, the standard library compiled again with
   ``--invalidation-mode unchecked-hash``. Cached under ``<cache>/image/root-<key>``.
2. **python**: a venv at /opt/c5c3-orders with requirements/runtime.lock installed by
   ``pip install --require-hashes --no-index`` inside the root (the pip of requirements/lock-tools.txt, run from its
   wheel; the wheels downloaded beforehand with the same hashes). Cached under ``<cache>/image/venv-<key>``.
3. **collection**: kubernetes.core (from the hash-pinned ``ansible`` wheel, requirements/image-collections.lock)
   and the collection's own tarball installed with the image's ``ansible-galaxy collection install --offline``
   into /usr/share/ansible/collections, the controller package on the venv's path, the entrypoints and the
   ansible-runner private data dir of image/rootfs/, the user ``runner`` (1000:1000, HOME /runner).

Reproducible: every file's mtime is clamped (the two lower layers to the epoch recorded in image/debian.lock, so
their digests do not change from one commit to the next; the top layer and the config to SOURCE_DATE_EPOCH, the
commit time), bytecode is ``unchecked-hash`` (no timestamps), umoci sorts the tar entries and writes numeric owners,
and the archive is written here with sorted entries, fixed owners and mtimes. The same inputs give the same digest;
``--rebuild`` builds every stage again without any cache and says whether the digest matched the recorded one.
"""
import argparse
import datetime
import fcntl
import hashlib
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEBIAN_LOCK = HERE / "debian.lock"
RUNTIME_LOCK = REPO / "requirements" / "runtime.lock"
TOOLS_LOCK = REPO / "requirements" / "lock-tools.txt"
COLLECTIONS_LOCK = REPO / "requirements" / "image-collections.lock"
STATIC = HERE / "rootfs"

NAME = "localhost/c5c3-orders"
SUITE = "bookworm"
MIRRORS = (
    "deb http://deb.debian.org/debian bookworm main",
    "deb http://deb.debian.org/debian bookworm-updates main",
    "deb http://deb.debian.org/debian-security bookworm-security main",
)
PACKAGES = ("python3", "ca-certificates", "tini")
DPKG_EXCLUDES = (
    "path-exclude=/usr/share/man/*", "path-exclude=/usr/share/doc/*", "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/locale/*", "path-exclude=/usr/share/info/*", "path-exclude=/usr/share/lintian/*",
    "path-exclude=/usr/share/bash-completion/*",
)
# what mmdebstrap leaves that an image does not want: the host's resolver and name, apt (not installed: the
# essential variant installs the packages with the host's apt), logs, caches and dpkg's backups
ROOT_REMOVE = (
    "etc/resolv.conf", "etc/hostname", "etc/apt", "etc/dpkg/dpkg.cfg.d/99mmdebstrap", "var/lib/apt", "var/cache/apt",
    "var/log/apt", "var/cache/ldconfig/aux-cache", "var/lib/dpkg/status-old", "var/lib/dpkg/diversions-old",
    "var/lib/dpkg/statoverride-old", "var/cache/debconf/config.dat-old", "var/cache/debconf/templates.dat-old",
)
PYTHON = "/usr/bin/python3.11"
VENV = "/opt/c5c3-orders"
SITE = VENV + "/lib/python3.11/site-packages"
COLLECTIONS = "/usr/share/ansible/collections"
ORDERS = COLLECTIONS + "/ansible_collections/c5c3/orders"
USER, UID, GID, HOME = "runner", 1000, 1000, "/runner"
# the wheels pip may pick: bookworm's glibc 2.36 and CPython 3.11 on amd64, whatever the host is (pip expands no
# --platform into the older manylinux tags, so every one is named, newest first: pip prefers the first that fits)
WHEEL_TARGET = ("--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
                *(arg for minor in range(36, 4, -1) for arg in ("--platform", f"manylinux_2_{minor}_x86_64")),
                "--platform", "manylinux2014_x86_64", "--platform", "manylinux2010_x86_64",
                "--platform", "manylinux1_x86_64")
# Left out of the venv, where nothing imports them at run time: ansible-test (a developer tool of ansible-core, and
# its console script), the kubernetes client's own tests, and every package's __pycache__ pip would write.
# botocore's models of the AWS services, 28 MB for 449 of them: the image keeps those the collection's RGW edge makes
# clients for (plugins/module_utils/rgw/: iam, s3; tests/integration/test_image.py checks that list against the
# code) and sts; a client for any other service fails with botocore's UnknownServiceError.
BOTOCORE_SERVICES = ("iam", "s3", "sts")
VENV_REMOVE = ("bin/ansible-test", "lib/python3.11/site-packages/ansible_test",
               "lib/python3.11/site-packages/kubernetes/test", "lib/python3.11/site-packages/kubernetes/e2e_test")
ENV = {
    "PATH": f"{VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
    "HOME": HOME,
    "PYTHONDONTWRITEBYTECODE": "1",
    "ANSIBLE_LOCALHOST_WARNING": "false",
    "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
}

T0 = time.monotonic()


def say(msg):
    print(f"[image {time.monotonic() - T0:6.1f}s] {msg}", flush=True)


class BuildError(Exception):
    pass


def run(argv, env=None, cwd=None, log=None, capture=False):
    """Run ``argv``; its output goes to ``log`` (appended) or is returned; a failure raises with the output's tail."""
    argv = [str(a) for a in argv]
    proc = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace", check=False)
    if log is not None:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"$ {' '.join(argv)}\n{proc.stdout}\n[rc={proc.returncode}]\n")
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-40:])
        raise BuildError(f"{' '.join(argv[:6])} ... failed (rc={proc.returncode}):\n{tail}")
    return proc.stdout if capture else None


def in_root(root, argv, log, env=None):
    """``argv`` chrooted into ``root`` with /proc and /dev mounted, in a mount namespace of its own (the mounts go
    with it), with a clean environment."""
    script = 'set -e; mount -t proc proc "$0/proc"; mount --rbind /dev "$0/dev"; exec chroot "$0" "$@"'
    base = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
            "HOME": "/root", "PYTHONDONTWRITEBYTECODE": "1"}
    return run(["unshare", "--mount", "--pid", "--fork", "--propagation", "private", "sh", "-c", script,
                root] + list(argv), env=dict(base, **(env or {})), log=log)


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256_json(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def source_of(*funcs):
    """The source text of the functions that make a stage: part of its cache key, so a change of the recipe
    is a new key (no version number to remember)."""
    return "\n".join(inspect.getsource(f) for f in funcs)


def tree_hash(root):
    """Names, modes and contents of the files under ``root`` (not their mtimes)."""
    entries = []
    for path in sorted(p for p in Path(root).rglob("*") if "__pycache__" not in p.parts):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            entries.append([rel, "l", os.readlink(path)])
        elif path.is_file():
            entries.append([rel, oct(path.stat().st_mode & 0o7777), sha256_file(path)])
        else:
            entries.append([rel, "d"])
    return sha256_json(entries)


# what the collection tarball must not bring into the image: the checkout's tooling, any hidden folder (state,
# caches, a scratch copy of the collection), bytecode and archives (tests/integration/test_installed_collection.py
# checks the tarball more strictly)
NOT_SHIPPED = re.compile(r"^(tests|stack|benchmarks|demo|extensions|mk|build|image)/|^\.[^/]+/|^Makefile$"
                         r"|(^|/)__pycache__/|\.pyc$|\.tar(\.gz)?$")


def check_tarball(path, version):
    """The collection tarball is c5c3.orders ``version`` and holds nothing of the checkout but the collection."""
    with tarfile.open(path) as tar:
        manifest = json.load(tar.extractfile("MANIFEST.json"))["collection_info"]
        leaked = sorted(m.name for m in tar.getmembers() if m.isfile() and NOT_SHIPPED.search(m.name))
    if (manifest["namespace"], manifest["name"], manifest["version"]) != ("c5c3", "orders", version):
        raise BuildError(f"{path} is {manifest['namespace']}.{manifest['name']} {manifest['version']}, "
                         f"not c5c3.orders {version}")
    if leaked:
        raise BuildError(f"{path} holds files of the checkout that are not the collection ({len(leaked)}, e.g. "
                         f"{', '.join(leaked[:5])}): add them to galaxy.yml's build_ignore")


def tarball_content_hash(path):
    """The members of a (gzipped) tar, by name, type, mode and content: ansible-galaxy's tarball carries the
    build time, its content does not."""
    entries = []
    with tarfile.open(path) as tar:
        for member in tar.getmembers():
            data = tar.extractfile(member).read() if member.isfile() else b""
            entries.append([member.name, member.type.decode(), member.mode, member.linkname,
                            hashlib.sha256(data).hexdigest()])
    return sha256_json(sorted(entries))


def clamp_mtimes(root, epoch):
    """Every entry under ``root`` (``root`` too) newer than ``epoch`` gets ``epoch`` as its mtime."""
    def clamp(path):
        st = os.lstat(path)
        if st.st_mtime > epoch:
            os.utime(path, (epoch, epoch), follow_symlinks=False)
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            clamp(os.path.join(top, name))
    clamp(root)


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)  # a file, a link, a device node


def remove_pycache(root):
    for top, dirs, _files in os.walk(root):
        for name in list(dirs):
            if name == "__pycache__":
                shutil.rmtree(os.path.join(top, name))
                dirs.remove(name)


def copy_tree(src, dest):
    """``cp -a``: owners, modes, mtimes, hard links, symlinks as they are."""
    Path(dest).mkdir(parents=True, exist_ok=True)
    run(["cp", "-a", "--no-target-directory", src, dest])


def requirement_block(lock, name):
    """The lines of one requirement (``name==version \\`` and its ``--hash`` lines) of a pip-compile lock."""
    lines, out, taking = Path(lock).read_text().splitlines(), [], False
    for line in lines:
        if re.match(rf"^{re.escape(name)}==", line, re.I):
            taking = True
        elif taking and not line.startswith("    --hash"):
            break
        if taking:
            out.append(line)
    if not out:
        raise BuildError(f"{lock} pins no {name}")
    return "\n".join(out) + "\n"


class Cache:
    def __init__(self, root):
        self.root = Path(root) / "image"
        self.root.mkdir(parents=True, exist_ok=True)

    def lock(self):
        fh = open(self.root / ".lock", "w")  # one image build per machine at a time
        fcntl.flock(fh, fcntl.LOCK_EX)
        return fh


# -- stage 1: the Debian root -----------------------------------------------------------------------------------

def read_debian_lock(path=DEBIAN_LOCK):
    """(epoch, {package: (version, arch)}) of image/debian.lock."""
    if not path.exists():
        raise BuildError(f"{path} is missing: run `make image-lock-debian` to pin the Debian packages")
    epoch, pins = None, {}
    for line in path.read_text().splitlines():
        if line.startswith("epoch:"):
            epoch = int(line.split(":", 1)[1])
        elif line.strip() and not line.startswith("#"):
            package, version, arch = line.split()
            pins[package] = (version, arch)
    if epoch is None or not pins:
        raise BuildError(f"{path} holds no epoch or no package")
    return epoch, pins


def mmdebstrap_argv(target, pins_file, packages_out):
    argv = ["mmdebstrap", "--variant=essential", "--mode=root", "--format=directory",
            "--include=" + ",".join(PACKAGES), "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
            "--aptopt=Apt::Install-Recommends \"false\"",
            # the machine's clock may be ahead of the suites' Release files
            "--aptopt=Acquire::Check-Valid-Until \"false\""]
    argv += ["--dpkgopt=" + opt for opt in DPKG_EXCLUDES]
    if pins_file:
        argv.append(f"--setup-hook=mkdir -p \"$1/etc/apt/preferences.d\" && cp {pins_file} "
                    "\"$1/etc/apt/preferences.d/c5c3-orders-pins\"")
    argv.append("--customize-hook=chroot \"$1\" dpkg-query -W -f '${Package} ${Version} ${Architecture}\\n' > "
                + str(packages_out))
    return argv + [SUITE, str(target)] + list(MIRRORS)


def finish_root(root, epoch, log):
    """The root as the image holds it: leftovers of the build removed, no device nodes (the runtime mounts /dev),
    the standard library's bytecode made again without timestamps, every mtime clamped."""
    for rel in ROOT_REMOVE:
        remove(os.path.join(root, rel))
    for entry in os.listdir(os.path.join(root, "dev")):
        remove(os.path.join(root, "dev", entry))
    for tmp in ("tmp", "var/tmp"):
        for entry in os.listdir(os.path.join(root, tmp)):
            remove(os.path.join(root, tmp, entry))
    remove_pycache(root)
    in_root(root, [PYTHON, "-m", "compileall", "-q", "-q", "--invalidation-mode", "unchecked-hash",
                   "/usr/lib/python3.11", "/usr/lib/python3/dist-packages"], log)
    clamp_mtimes(root, epoch)


def root_key(lock_text):
    return sha256_json({"lock": lock_text, "recipe": source_of(mmdebstrap_argv, finish_root),
                        "consts": [SUITE, MIRRORS, PACKAGES, DPKG_EXCLUDES, ROOT_REMOVE]})[:16]


def ensure_mmdebstrap(log):
    if shutil.which("mmdebstrap"):
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run(["apt-get", "update", "-q"], env=env, log=log)
    run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "mmdebstrap"], env=env, log=log)


def debootstrap(work, epoch, pins, log):
    """A fresh root under ``work``/root: pinned to ``pins`` (or to what the mirror serves now, when None).
    Returns (root, {package: (version, arch)} installed)."""
    ensure_mmdebstrap(log)
    Path(work).mkdir(parents=True, exist_ok=True)
    target, packages_out, pins_file = Path(work) / "root", Path(work) / "packages.txt", None
    if pins:
        pins_file = Path(work) / "pins.pref"
        pins_file.write_text("".join(f"Package: {p}\nPin: version {v}\nPin-Priority: 1001\n\n"
                                     for p, (v, _a) in sorted(pins.items())))
    run(mmdebstrap_argv(target, pins_file, packages_out), env=dict(os.environ, SOURCE_DATE_EPOCH=str(epoch)),
        log=log)
    installed = {}
    for line in packages_out.read_text().splitlines():
        package, version, arch = line.split()
        installed[package] = (version, arch)
    finish_root(target, epoch, log)
    return target, installed


def build_root(cache, work, log, fresh=False):
    """The cached Debian root of image/debian.lock (built first when missing, or when ``fresh``)."""
    lock_text = DEBIAN_LOCK.read_text()
    epoch, pins = read_debian_lock()
    key = root_key(lock_text)
    out = cache.root / f"root-{key}"
    if out.is_dir() and (cache.root / f"root-{key}.complete").exists() and not fresh:
        say(f"debian root: cached {out}")
        return out, key, epoch
    say(f"debian root: mmdebstrap {SUITE} ({len(pins)} pinned packages) ...")
    root, installed = debootstrap(work / "debian", epoch, pins, log)
    if installed != pins:
        changed = [f"{p} {pins[p][0]} -> {installed[p][0]}" for p in sorted(set(pins) & set(installed))
                   if pins[p] != installed[p]]
        changed += [f"{p} {pins[p][0]} is no longer installed" for p in sorted(set(pins) - set(installed))]
        changed += [f"{p} {installed[p][0]} is new" for p in sorted(set(installed) - set(pins))]
        raise BuildError("Debian no longer serves what image/debian.lock pins (a point release or a security update "
                         "replaced it):\n  " + "\n  ".join(changed) + "\nrun `make image-lock-debian` to pin what "
                         "the mirror serves now, and commit image/debian.lock")
    (cache.root / f"root-{key}.complete").unlink(missing_ok=True)
    remove(out)
    shutil.move(str(root), out)
    (cache.root / f"root-{key}.complete").write_text(lock_text)
    say(f"debian root: built {out}")
    return out, key, epoch


def lock_debian(cache, work, log):
    """Rewrite image/debian.lock with what the mirror serves now (and cache the root it was read from)."""
    epoch = int(time.time())
    say(f"debian lock: mmdebstrap {SUITE}, unpinned ...")
    root, installed = debootstrap(work / "debian", epoch, None, log)
    lines = ["# Every Debian package of the image's root (make image; image/build.py), pinned: make image installs",
             "# exactly these versions (apt preferences) and fails when the mirror no longer serves one. Written by",
             "# `make image-lock-debian` from what " + ", ".join(m.split()[2] for m in MIRRORS) + " served then;",
             "# the epoch (that moment) is the mtime of the image's two lower layers and mmdebstrap's",
             "# SOURCE_DATE_EPOCH.",
             f"epoch: {epoch}"]
    lines += [f"{p} {v} {a}" for p, (v, a) in sorted(installed.items())]
    DEBIAN_LOCK.write_text("\n".join(lines) + "\n")
    key = root_key(DEBIAN_LOCK.read_text())
    out = cache.root / f"root-{key}"
    remove(out)
    shutil.move(str(root), out)
    (cache.root / f"root-{key}.complete").write_text(DEBIAN_LOCK.read_text())
    say(f"debian lock: {DEBIAN_LOCK} ({len(installed)} packages), root cached as {out}")


# -- stage 2: the venv ------------------------------------------------------------------------------------------

def download_wheels(pip, dest, log):
    """The wheels of runtime.lock for the image's platform and pip's own, hashes checked (a cache shared by builds:
    pip keeps a file already there when its hash is right)."""
    env = {k: v for k, v in os.environ.items() if k != "PIP_FIND_LINKS"}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    dest.mkdir(parents=True, exist_ok=True)
    run([pip, "download", "-q", "--require-hashes", "--no-deps", *WHEEL_TARGET, "-d", dest, "-r", RUNTIME_LOCK],
        env=env, log=log)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write(requirement_block(TOOLS_LOCK, "pip"))
    try:
        run([pip, "download", "-q", "--require-hashes", "--no-deps", "--only-binary=:all:", "-d", dest, "-r",
             fh.name], env=env, log=log)
    finally:
        os.unlink(fh.name)
    version = re.search(r"^pip==(\S+)", requirement_block(TOOLS_LOCK, "pip"), re.M).group(1)
    wheel = dest / f"pip-{version}-py3-none-any.whl"
    if not wheel.exists():
        raise BuildError(f"pip download left no {wheel.name}")
    return wheel


def install_venv(root, wheels, pip_wheel, log):
    """requirements/runtime.lock into a venv at VENV inside ``root`` (a scratch copy of the Debian root):
    offline, hashes required, the pip of lock-tools.txt run from its wheel (it stays out of the image)."""
    build = Path(root) / "tmp" / "c5c3-build"
    (build / "wheels").mkdir(parents=True)
    for wheel in wheels.glob("*.whl"):
        shutil.copy2(wheel, build / "wheels" / wheel.name)
    shutil.copy2(RUNTIME_LOCK, build / "runtime.lock")
    in_root(root, [PYTHON, "-m", "venv", "--without-pip", VENV], log)
    in_root(root, [VENV + "/bin/python", f"/tmp/c5c3-build/wheels/{pip_wheel.name}/pip", "install", "-q",
                   "--no-index", "--find-links", "/tmp/c5c3-build/wheels", "--require-hashes", "--only-binary=:all:",
                   "--no-compile", "--no-cache-dir", "--disable-pip-version-check", "--root-user-action=ignore",
                   "-r", "/tmp/c5c3-build/runtime.lock"], log)
    venv = Path(root) / VENV.lstrip("/")
    for rel in VENV_REMOVE:
        remove(venv / rel)
    models = venv / "lib/python3.11/site-packages/botocore/data"
    for service in os.listdir(models):
        if (models / service).is_dir() and service not in BOTOCORE_SERVICES:
            remove(models / service)
    remove_pycache(venv)
    in_root(root, [VENV + "/bin/python", "-m", "compileall", "-q", "-q", "--invalidation-mode", "unchecked-hash",
                   SITE], log)
    return venv


def venv_key(root_key_, pip_wheel_hash):
    return sha256_json({"root": root_key_, "lock": RUNTIME_LOCK.read_text(), "pip": pip_wheel_hash,
                        "recipe": source_of(install_venv),
                        "consts": [VENV, VENV_REMOVE, WHEEL_TARGET, BOTOCORE_SERVICES]})[:16]


def build_venv(cache, work, root, root_key_, epoch, pip, log, fresh=False):
    pip_block = requirement_block(TOOLS_LOCK, "pip")
    key = venv_key(root_key_, sha256_json(pip_block))
    out = cache.root / f"venv-{key}"
    if out.is_dir() and (cache.root / f"venv-{key}.complete").exists() and not fresh:
        say(f"venv: cached {out}")
        return out, key
    say("venv: pip download (hash-checked) ...")
    pip_wheel = download_wheels(pip, cache.root / "wheels", log)
    scratch = work / "venv-root"
    copy_tree(root, scratch)
    say("venv: pip install --require-hashes --no-index inside the root ...")
    venv = install_venv(scratch, cache.root / "wheels", pip_wheel, log)
    clamp_mtimes(venv, epoch)
    (cache.root / f"venv-{key}.complete").unlink(missing_ok=True)
    remove(out)
    shutil.move(str(venv), out)
    (cache.root / f"venv-{key}.complete").write_text(RUNTIME_LOCK.read_text())
    shutil.rmtree(scratch)
    say(f"venv: built {out}")
    return out, key


# -- stage 3: the collection and the image's own files -----------------------------------------------------------

def kubernetes_core_wheel(pip, dest, log):
    env = {k: v for k, v in os.environ.items() if k != "PIP_FIND_LINKS"}
    dest.mkdir(parents=True, exist_ok=True)
    run([pip, "download", "-q", "--require-hashes", "--no-deps", "--only-binary=:all:", "-d", dest, "-r",
         COLLECTIONS_LOCK], env=env, log=log)
    version = re.search(r"^ansible==(\S+)", COLLECTIONS_LOCK.read_text(), re.M).group(1)
    return dest / f"ansible-{version}-py3-none-any.whl"


def install_collections(rootfs, collection_tarball, kcore_wheel, log):
    """kubernetes.core out of the ansible wheel, then the collection's tarball with the image's own ansible-galaxy
    (offline: the dependency is the kubernetes.core just put there)."""
    prefix = "ansible_collections/kubernetes/core/"
    dest = Path(rootfs) / COLLECTIONS.lstrip("/")
    with zipfile.ZipFile(kcore_wheel) as whl:
        members = [n for n in whl.namelist() if n.startswith(prefix) and not n.endswith("/")]
        for name in members:
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(whl.read(name))
            target.chmod(0o644)
    manifest = json.loads((dest / prefix / "MANIFEST.json").read_text())
    build = Path(rootfs) / "tmp" / "c5c3-build"
    build.mkdir(parents=True)
    shutil.copy2(collection_tarball, build / "collection.tar.gz")
    in_root(rootfs, [VENV + "/bin/ansible-galaxy", "collection", "install", "--offline",
                     "/tmp/c5c3-build/collection.tar.gz", "-p", COLLECTIONS], log,
            env={"HOME": "/tmp/c5c3-build/home", "ANSIBLE_HOME": "/tmp/c5c3-build/home/.ansible",
                 "ANSIBLE_COLLECTIONS_PATH": COLLECTIONS, "ANSIBLE_NOCOLOR": "1"})
    shutil.rmtree(build)
    return manifest["collection_info"]["version"]


def add_image_files(rootfs, log):
    """The entrypoints, the runner's private data dir, the controller on the venv's path, the user, /runner."""
    root = Path(rootfs)
    for src in sorted(STATIC.rglob("*")):
        dest = root / src.relative_to(STATIC)
        if src.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
            dest.chmod(0o755)
        else:
            shutil.copyfile(src, dest)
            dest.chmod(0o755 if os.access(src, os.X_OK) else 0o644)
    # `python3 -m c5c3_orders_controller` (the install role's Deployment) finds the controller the collection ships
    (root / SITE.lstrip("/") / "c5c3_orders_controller.pth").write_text(ORDERS + "/controller\n")
    with open(root / "etc/passwd", "a", encoding="utf-8") as fh:
        fh.write(f"{USER}:x:{UID}:{GID}:c5c3-orders:{HOME}:/usr/sbin/nologin\n")
    with open(root / "etc/group", "a", encoding="utf-8") as fh:
        fh.write(f"{USER}:x:{GID}:\n")
    home = root / HOME.lstrip("/")  # the user's, and group 0's (OpenShift runs an arbitrary UID in group 0)
    home.mkdir()
    os.chown(home, UID, 0)
    home.chmod(0o775)
    remove_pycache(root / COLLECTIONS.lstrip("/"))
    in_root(rootfs, [VENV + "/bin/python", "-m", "compileall", "-q", "-q", "--invalidation-mode", "unchecked-hash",
                     ORDERS + "/controller", ORDERS + "/plugins/module_utils"], log)


# -- the OCI image ----------------------------------------------------------------------------------------------

def iso(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def oci_json(layout, digest):
    return json.loads((Path(layout) / "blobs" / "sha256" / digest.split(":", 1)[1]).read_text())


def write_archive(layout, archive, epoch):
    """The layout as one tar (``ctr images import``, ``skopeo copy oci-archive:``): sorted entries, root-owned,
    fixed mtime, ustar."""
    tmp = Path(str(archive) + ".tmp")
    paths = sorted(p.relative_to(layout).as_posix() for p in Path(layout).rglob("*"))
    with open(tmp, "wb") as raw, tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for rel in paths:
            path = Path(layout) / rel
            info = tarfile.TarInfo(rel)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = epoch
            if path.is_dir():
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size, info.mode = path.stat().st_size, 0o644
                with open(path, "rb") as fh:
                    tar.addfile(info, fh)
    tmp.rename(archive)


def assemble(args, work, root, venv, epochs, collection_tarball, kcore_wheel, log, labels):
    """umoci: an empty image, then one repack per layer of the bundle's root filesystem, the config, gc."""
    base_epoch, epoch = epochs
    # the lower layers keep the lock's epoch, unless SOURCE_DATE_EPOCH is older (a lock newer than the commit):
    # no mtime is ever newer than SOURCE_DATE_EPOCH
    base_epoch = min(base_epoch, epoch)
    umoci = str(Path(args.umoci).resolve())
    env = dict(os.environ, SOURCE_DATE_EPOCH=str(epoch))
    layout, bundle = work / "layout", work / "bundle"
    ref = f"{layout}:{args.tag}"
    rootfs = bundle / "rootfs"
    run([umoci, "init", "--layout", layout], env=env, log=log)
    run([umoci, "new", "--image", ref], env=env, log=log)
    run([umoci, "unpack", "--image", ref, bundle], env=env, log=log)

    def repack(created_by, stage_epoch):
        clamp_mtimes(rootfs, stage_epoch)
        run([umoci, "repack", "--refresh-bundle", "--history.created", iso(stage_epoch), "--history.created_by",
             created_by, "--image", ref, bundle], env=env, log=log)

    say("layer 1: the Debian root")
    shutil.rmtree(rootfs)
    copy_tree(root, rootfs)
    os.utime(rootfs, (base_epoch, base_epoch))
    repack(f"mmdebstrap --variant=essential {SUITE} {','.join(PACKAGES)} (image/debian.lock)", base_epoch)
    say("layer 2: the venv")
    copy_tree(venv, rootfs / VENV.lstrip("/"))
    repack(f"pip install --require-hashes -r requirements/runtime.lock ({VENV})", base_epoch)
    say("layer 3: the collections, entrypoints, user")
    version = install_collections(rootfs, collection_tarball, kcore_wheel, log)
    add_image_files(rootfs, log)
    repack(f"ansible-galaxy collection install c5c3-orders-{args.version}.tar.gz, kubernetes.core {version}; "
           "image/rootfs", epoch)
    config = [umoci, "config", "--image", ref, "--no-history", "--created", iso(epoch), "--os", "linux",
              "--architecture", "amd64", "--config.user", f"{UID}:{GID}", "--config.workingdir", HOME,
              "--config.entrypoint", "/usr/bin/tini", "--config.entrypoint", "--",
              "--config.cmd", "c5c3-orders-controller", "--author", "c5c3.orders"]
    for key, value in ENV.items():
        config += ["--config.env", f"{key}={value}"]
    for key, value in labels.items():
        config += ["--config.label", f"{key}={value}"]
    run(config, env=env, log=log)
    run([umoci, "gc", "--layout", layout], env=env, log=log)
    # containerd names an imported image after io.containerd.image.name (ctr import without --base-name keeps no
    # other), skopeo and the OCI tools after org.opencontainers.image.ref.name
    index = json.loads((layout / "index.json").read_text())
    (manifest_desc,) = index["manifests"]
    manifest_desc["annotations"] = {"io.containerd.image.name": args.tag,
                                    "org.opencontainers.image.ref.name": args.tag}
    (layout / "index.json").write_text(json.dumps(index, separators=(",", ":")))
    return layout, manifest_desc


def describe(layout, manifest_desc):
    manifest = oci_json(layout, manifest_desc["digest"])
    config = oci_json(layout, manifest["config"]["digest"])
    history = [h for h in config.get("history", []) if not h.get("empty_layer")]
    layers = []
    for layer, diff_id, hist in zip(manifest["layers"], config["rootfs"]["diff_ids"], history):
        layers.append({"digest": layer["digest"], "size": layer["size"], "diff_id": diff_id,
                       "uncompressed_size": int(layer.get("annotations", {}).get("ci.umo.uncompressed_blob_size", 0)),
                       "created_by": hist.get("created_by", "")})
    return layers


def git(*argv):
    proc = subprocess.run(["git", "-C", str(REPO), *argv], capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def build(args):
    cache = Cache(args.cache)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    archive = out_dir / f"c5c3-orders-{args.version}.tar"
    record_path = out_dir / f"{args.version}.json"
    log = out_dir / "build.log"
    epoch = args.source_date_epoch
    lock_fh = cache.lock()
    log.write_text("")
    check_tarball(args.collection, args.version)
    revision = git("rev-parse", "HEAD")
    labels = {"org.opencontainers.image.title": "c5c3-orders",
              "org.opencontainers.image.description": "c5c3.orders: the controller and the collection",
              "org.opencontainers.image.version": args.version, "org.opencontainers.image.revision": revision,
              "org.opencontainers.image.created": iso(epoch), "org.opencontainers.image.licenses": "Apache-2.0"}
    inputs = {
        "image/debian.lock": sha256_file(DEBIAN_LOCK),
        "requirements/runtime.lock": sha256_file(RUNTIME_LOCK),
        "requirements/lock-tools.txt (pip)": sha256_json(requirement_block(TOOLS_LOCK, "pip")),
        "requirements/image-collections.lock": sha256_file(COLLECTIONS_LOCK),
        "collection tarball (content)": tarball_content_hash(args.collection),
        "image/ (build.py, rootfs/, umoci/)": tree_hash(HERE),
        "umoci": run([args.umoci, "--version"], capture=True).splitlines()[0],
        "mmdebstrap": run(["mmdebstrap", "--version"], capture=True).strip() if shutil.which("mmdebstrap") else "",
        "source_date_epoch": epoch, "labels": labels, "tag": args.tag,
    }
    key = sha256_json(inputs)
    previous = json.loads(record_path.read_text()) if record_path.exists() else None
    if (not args.rebuild and previous and previous.get("inputs_hash") == key and archive.exists()
            and sha256_file(archive) == previous.get("archive_sha256")):
        say(f"cached: {archive} (inputs unchanged: {key[:16]})")
        print_result(previous, cached=True)
        return 0
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="c5c3-image-", dir=args.work))
    try:
        root, rkey, base_epoch = build_root(cache, work, log, fresh=args.rebuild)
        venv, _vkey = build_venv(cache, work, root, rkey, base_epoch, args.pip, log, fresh=args.rebuild)
        kcore = kubernetes_core_wheel(args.pip, cache.root / "wheels", log)
        layout, manifest_desc = assemble(args, work, root, venv, (base_epoch, epoch), args.collection, kcore, log,
                                         labels)
        say("writing the archive")
        write_archive(layout, archive, epoch)
        layers = describe(layout, manifest_desc)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    record = {
        "image": args.tag, "archive": str(archive.relative_to(REPO) if archive.is_relative_to(REPO) else archive),
        "digest": manifest_desc["digest"], "archive_sha256": sha256_file(archive), "size": archive.stat().st_size,
        "uncompressed_size": sum(layer["uncompressed_size"] for layer in layers), "layers": layers,
        "source_date_epoch": epoch, "created": iso(epoch), "revision": revision,
        "tree_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "inputs_hash": key, "inputs": inputs, "build_seconds": round(time.monotonic() - started, 1),
    }
    if args.rebuild and previous and previous.get("inputs_hash") == key:
        same = previous["digest"] == record["digest"] and previous["archive_sha256"] == record["archive_sha256"]
        record["reproduced"] = {"previous_digest": previous["digest"], "same": same}
        say(f"rebuilt without caches: digest {'SAME as' if same else 'DIFFERS from'} the recorded build "
            f"({previous['digest']})")
    record_path.write_text(json.dumps(record, indent=2) + "\n")
    lock_fh.close()
    print_result(record, cached=False)
    if record.get("reproduced", {}).get("same") is False:
        return 3
    return 0


def print_result(record, cached):
    mib = record["size"] / 1048576
    print(f"image:   {record['image']}  ({'cached' if cached else 'built in %ss' % record['build_seconds']})")
    print(f"archive: {record['archive']}  {record['size']} bytes ({mib:.1f} MiB; "
          f"{record['uncompressed_size'] / 1048576:.1f} MiB unpacked), sha256:{record['archive_sha256']}")
    for layer in record["layers"]:
        print(f"  layer {layer['digest'][:19]}  {layer['size'] / 1048576:6.1f} MiB  {layer['created_by'][:80]}")
    print(f"digest:  {record['digest']}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build (or find cached) the image archive")
    b.add_argument("--collection", required=True, help="the collection tarball (make collection)")
    b.add_argument("--version", required=True)
    b.add_argument("--umoci", required=True)
    b.add_argument("--pip", required=True, help="the pip that downloads (requirements/lock-tools.txt's venv)")
    b.add_argument("--out", default=str(REPO / ".image"))
    b.add_argument("--cache", default=os.environ.get("C5C3_CACHE", os.path.expanduser("~/.cache/c5c3-orders")))
    b.add_argument("--work", default=None, help="scratch space (default: $TMPDIR)")
    b.add_argument("--tag", default=None, help="image name (default localhost/c5c3-orders:<version>)")
    b.add_argument("--source-date-epoch", type=int, default=None,
                   help="default $SOURCE_DATE_EPOCH, else the commit time of HEAD")
    b.add_argument("--rebuild", action="store_true", help="build every stage again, using no cache")
    d = sub.add_parser("lock-debian", help="rewrite image/debian.lock with what the Debian mirror serves now")
    d.add_argument("--cache", default=os.environ.get("C5C3_CACHE", os.path.expanduser("~/.cache/c5c3-orders")))
    args = p.parse_args(argv)
    if os.geteuid() != 0:
        print("image: building the root needs root (mmdebstrap --mode=root, chroot)", file=sys.stderr)
        return 2
    try:
        if args.cmd == "lock-debian":
            cache = Cache(args.cache)
            with cache.lock():
                work = Path(tempfile.mkdtemp(prefix="c5c3-image-lock-"))
                try:
                    lock_debian(cache, work, cache.root / "lock-debian.log")
                finally:
                    shutil.rmtree(work, ignore_errors=True)
            return 0
        args.tag = args.tag or f"{NAME}:{args.version}"
        if args.source_date_epoch is None:
            env_epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
            args.source_date_epoch = int(env_epoch) if env_epoch else int(git("log", "-1", "--format=%ct") or 0)
        return build(args)
    except BuildError as exc:
        print(f"image: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
