"""``python -m c5c3stack up|down|status``: one command per verb for the whole local stack.

``up`` is idempotent (a running, healthy part is reused) and prints how long each part took;
``--target NAME`` also starts an independent second control plane (a target cluster). The env file
``.stack/env`` it writes (``envfile``) is shell-sourceable and is what the tests and the demo read.
``import-image ARCHIVE`` loads an OCI (or docker) image archive into the node's containerd.
"""
import argparse
import sys
import time
from pathlib import Path

from . import controllers, envfile, fixtures, keystone, kube, mariadb, node, openbao, rgw
from .config import StackConfig, skipped_parts
from .process import StackError


def _targets(cfg: StackConfig):
    path = cfg.state / "kube" / "targets"
    return path.read_text().split() if path.exists() else []


def _target_index(cfg: StackConfig, name: str) -> int:
    names = _targets(cfg)
    if name not in names:
        names.append(name)
        cfg.dir("kube").joinpath("targets").write_text("\n".join(names) + "\n")
    return names.index(name) + 1


def _timed(label, fn, *args):
    t0 = time.monotonic()
    out = fn(*args)
    print(f"  {label:<28} {time.monotonic() - t0:6.1f}s", flush=True)
    return out or {}


def up(cfg: StackConfig, targets, with_controllers: bool) -> None:
    print("bringing the local stack up", flush=True)
    t0 = time.monotonic()
    env = {}
    env.update(_timed("kube (management)", kube.up, cfg))
    for name in targets:
        env.update(_timed(f"kube (target {name})", kube.up, cfg, name, _target_index(cfg, name)))
    env.update(_timed("mariadb", mariadb.up, cfg))
    env.update(_timed("keystone", keystone.up, cfg))
    env.update(_timed("openbao", openbao.up, cfg))
    for cluster in rgw.wanted():  # C5C3_SKIP_PARTS=rgw (or rgw-reef) leaves them out
        env.update(_timed(f"ceph {cluster.release.name} ({cluster.part})", rgw.up, cfg, cluster))
    if with_controllers:
        env.update(_timed("k-orc + eso", controllers.up, cfg))
        env.update(_timed("fixtures", fixtures.up, cfg))
    for name in targets:
        _timed(f"fixtures (target {name})", fixtures.up_target, cfg, name)
    if node.wanted():  # C5C3_SKIP_PARTS=node leaves containerd, the kubelet and kube-scheduler out
        env.update(_timed("node (containerd, kubelet)", node.up, cfg))
    env["C5C3_STACK_DIR"] = str(cfg.state)
    env["C5C3_TARGET_CLUSTERS"] = " ".join(_targets(cfg))
    env["C5C3_SKIPPED_PARTS"] = " ".join(sorted(skipped_parts()))
    envfile.write(cfg.env_file, env)
    print(f"stack up in {time.monotonic() - t0:.1f}s; env: {cfg.env_file}", flush=True)


def down(cfg: StackConfig) -> None:
    teardown_error = None
    try:  # first: it stops pods through containerd and deletes its Node while the API server runs
        node.down(cfg)
    except StackError as exc:  # stop everything else anyway, then report what the node left behind
        teardown_error = exc
    rgw.down(cfg)
    controllers.down(cfg)
    openbao.down(cfg)
    keystone.down(cfg)
    mariadb.down(cfg)
    for i, name in enumerate(_targets(cfg), start=1):
        kube.down(cfg, name, i)
    kube.down(cfg)
    if teardown_error is not None:
        raise teardown_error
    print("stack down")


def status(cfg: StackConfig) -> int:
    rows = kube.status(cfg)
    for i, name in enumerate(_targets(cfg), start=1):
        rows += kube.status(cfg, name, i)
    for part in (mariadb, keystone, openbao, rgw, controllers, node):
        rows += part.status(cfg)
    for name, state, detail in rows:
        print(f"{name:<34} {state:<5} {detail}")
    return 0 if all(state == "up" for _, state, _ in rows) else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="c5c3stack", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    p_up = sub.add_parser("up", help="bring the stack up (reuses running parts)")
    p_up.add_argument("--target", action="append", default=[], metavar="NAME",
                      help="also run a target cluster of that name (repeatable)")
    p_up.add_argument("--no-controllers", action="store_true", help="skip K-ORC, ESO and fixtures")
    sub.add_parser("down", help="stop every process of the stack")
    sub.add_parser("status", help="print each part's state; exit 1 if any is down")
    p_img = sub.add_parser("import-image", help="import an OCI or docker image archive into the node's containerd")
    p_img.add_argument("archive", type=Path)
    p_img.add_argument("--base-name", default="",
                       help="repository for images the archive names by tag only (ctr images import --base-name)")
    args = parser.parse_args(argv)
    cfg = StackConfig()
    try:
        if args.verb == "up":
            up(cfg, args.target, not args.no_controllers)
        elif args.verb == "down":
            down(cfg)
        elif args.verb == "import-image":
            for name in node.import_image(cfg, args.archive, args.base_name):
                print(name)
        else:
            return status(cfg)
    except StackError as exc:
        print(f"stack error: {exc}", file=sys.stderr)
        return 1
    return 0
