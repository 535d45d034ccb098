"""How a further benchmark scenario plugs into ``make bench`` (the peer model, repair latency, scale-out, ...).

A scenario is a file ``benchmarks/scenario_<name>.py`` that defines:

    NAME = "<name>"                       # its key in the results and its --scenarios name
    TITLE = "One line for its section"    # the heading of its section in docs/benchmarks.md
    def measure(ctx, n, out): ...         # measure at N orders; write JSON-serialisable figures into ``out``
    def report(results) -> str: ...       # its section's markdown (without the heading), from the results

and may define ``def wanted(args, n) -> bool`` (default: at every N). ``measure`` runs once per N, after the
module's own scenarios and the baselines, on the same bench cluster, whose N orders are converged (Ready) then;
it may change the cluster (it is torn down afterwards). ``out`` is ``results["sizes"][str(n)]["scenarios"][NAME]``.
``ctx`` (run.Bench) offers: ``ctx.bench`` (cluster.BenchCluster: ``client()``, ``create_orders``,
``play_controllers``, ``edit_delivered``, ``assign``, ``throttled()``), ``ctx.kubeconfig`` (admin),
``ctx.kubeconfig_pass`` (the ServiceAccount the measured runs use), ``ctx.namespaces``, ``ctx.orders`` (the N
orders as (namespace, name)), ``ctx.module(**args)`` (one module run, measured: ``wall``, ``rss_mib``, ``result``,
``throttled``), ``ctx.args``, ``ctx.work`` (the .bench/ folder), ``ctx.log(text)`` and ``ctx.save()``.
Timings are reported, never asserted.
"""
import importlib
from pathlib import Path
from typing import List, Optional


class Plugin:
    """A loaded scenario module, with the defaults filled in."""

    def __init__(self, module):
        self.module = module
        self.NAME = module.NAME
        self.TITLE = getattr(module, "TITLE", module.NAME)

    def wanted(self, args, n) -> bool:
        check = getattr(self.module, "wanted", None)
        return True if check is None else bool(check(args, n))

    def measure(self, ctx, n, out) -> None:
        self.module.measure(ctx, n, out)

    def report(self, results) -> str:
        return self.module.report(results)


def load(folder: Path, only: Optional[List[str]] = None) -> List[Plugin]:
    """Every ``scenario_*.py`` beside this file (sorted by name), or only those named."""
    plugins = []
    for path in sorted(Path(folder).glob("scenario_*.py")):
        plugin = Plugin(importlib.import_module(path.stem))
        if only is None or plugin.NAME in only:
            plugins.append(plugin)
    return plugins
