"""``make bench`` scenario ``revision``: this tree's converged pass side by side with an earlier commit's, one run.

A refactoring must not cost requests or time, and two benchmark runs on different days cannot show that (the host's
speed varies by more than the difference sought). So at N = 1,000 (``wanted``; with ``--quick`` or other sizes the
largest N up to 1,000) the earlier commit (``--against``, default ``HEAD~1``; ``C5C3_BENCH_AGAINST`` sets it too)
is exported with ``git archive`` into ``.bench/revision/<commit>/ansible_collections/c5c3/orders`` and its module
runs over the very same converged cluster as ours: ``ROUNDS`` rounds, each running both once, the order alternating
from round to round so that a warming cache or a busy neighbour favours neither. Reported: the median wall and CPU
seconds of each, their ratio, the requests and writes of each (which must be equal: a converged pass lists the
same collections and writes nothing), and whether each reported ``changed: false``.
"""
import statistics
import subprocess
import tarfile
import io
from pathlib import Path

NAME = "revision"
TITLE = "This tree side by side with an earlier commit: the converged pass at 1,000 orders"
AT = 1000
ROUNDS = 5
REPO = Path(__file__).resolve().parents[1]


def wanted(args, n):
    return n == max([s for s in args.sizes if s <= AT] or [0])


def _git(*argv, binary=False):
    out = subprocess.run(["git", "-C", str(REPO)] + list(argv), capture_output=True, check=True)
    return out.stdout if binary else out.stdout.decode().strip()


def export(commit, work):
    """The collection of ``commit`` under ``work``/revision/<sha>: the root to put on PYTHONPATH."""
    sha = _git("rev-parse", "--short=12", commit)
    root = Path(work) / "revision" / sha
    target = root / "ansible_collections" / "c5c3" / "orders"
    if not (target / "plugins").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        archive = _git("archive", "--format=tar", sha, "plugins", "meta", "galaxy.yml", binary=True)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(target)  # our own repository's tree
    return sha, root


def _figures(run):
    r = run.result
    return {"wall": run.wall, "cpu": run.cpu, "requests": r["api_requests"], "writes": r["api_writes"],
            "changed": r["changed"], "errors": r["errors"]}


def measure(ctx, n, out):
    against = getattr(ctx.args, "against", None) or "HEAD~1"
    try:
        sha, root = export(against, ctx.work)
    except subprocess.CalledProcessError as exc:  # a shallow clone has no HEAD~1
        out.update(n=n, skipped=f"cannot export {against}: {exc.stderr.decode(errors='replace').strip()}")
        ctx.log(f"N={n} revision: {out['skipped']}")
        return
    here = _git("rev-parse", "--short=12", "HEAD")
    dirty = bool(_git("status", "--porcelain", "--", "plugins"))
    runs = {"this": [], "earlier": []}
    for i in range(ROUNDS):
        order = ("this", "earlier") if i % 2 == 0 else ("earlier", "this")
        for which in order:
            run = ctx.module(collections=root if which == "earlier" else None)
            runs[which].append(_figures(run))
        ctx.log(f"N={n} revision round {i + 1}/{ROUNDS}: this {runs['this'][-1]['wall']:.2f}s, "
                f"{sha} {runs['earlier'][-1]['wall']:.2f}s")
    out.update(n=n, this={"commit": here + ("+modified" if dirty else "")}, earlier={"commit": sha, "ref": against})
    for which in runs:
        out[which].update(
            wall=statistics.median(r["wall"] for r in runs[which]),
            cpu=statistics.median(r["cpu"] for r in runs[which]),
            requests=sorted({r["requests"] for r in runs[which]}),
            writes=sorted({r["writes"] for r in runs[which]}),
            changed=any(r["changed"] for r in runs[which]), errors=max(r["errors"] for r in runs[which]),
            runs=runs[which])


def report(results):
    rows = ["| N | code | commit | median wall (s) | median CPU (s) | requests | writes | changed |",
            "|---|---|---|---|---|---|---|---|"]
    notes = []
    for size in results.get("sizes", {}).values():
        got = (size.get("scenarios") or {}).get(NAME)
        if not got or got.get("skipped"):
            if got:
                notes.append(f"At N = {got['n']}: not measured ({got['skipped']}).")
            continue
        for which, label in (("this", "this tree"), ("earlier", "earlier (" + got["earlier"]["ref"] + ")")):
            f = got[which]
            rows.append(f"| {got['n']} | {label} | {f['commit']} | {f['wall']:.2f} | {f['cpu']:.2f} | "
                        f"{', '.join(map(str, f['requests']))} | {', '.join(map(str, f['writes']))} | "
                        f"{f['changed']} |")
        this, earlier = got["this"], got["earlier"]
        notes.append(f"At N = {got['n']}: this tree / earlier = {this['wall'] / earlier['wall']:.2f}x wall, "
                     f"{this['cpu'] / earlier['cpu']:.2f}x CPU; requests "
                     f"{'equal' if this['requests'] == earlier['requests'] else 'DIFFER'}, writes "
                     f"{'equal' if this['writes'] == earlier['writes'] else 'DIFFER'}.")
    if len(rows) == 2:
        return "Not measured in this run. " + " ".join(notes)
    return ("Both modules run over the same converged cluster, alternating, " + str(ROUNDS) + " times each "
            "(medians).\n\n" + "\n".join(rows) + "\n\n" + "\n".join(notes))
