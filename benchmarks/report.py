"""docs/benchmarks.md and docs/benchmarks.png from the figures run.py gathered (.bench/results.json).

    python benchmarks/report.py      # regenerate both from the last results, without measuring again
"""
import json
import math
import os
import platform
import sys
from pathlib import Path

SCENARIOS = (("first", "first pass (nothing provisioned)"), ("converged", "converged pass"),
             ("drift", "1 % drift pass"))
TARGET_N = 1000
MEMORY_N = 5000


def machine():
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "load": [round(x, 2) for x in os.getloadavg()]}


def code_version(repo):
    """The commit measured, and the files of plugins/ that differed from it (the code that ran)."""
    import subprocess

    def git(*args):
        out = subprocess.run(["git", "-C", str(repo)] + list(args), capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else ""
    modified = [line[3:] for line in git("status", "--porcelain", "--", "plugins").splitlines() if line]
    return {"commit": git("rev-parse", "--short", "HEAD"), "plugins_modified": modified}


def slope(points):
    """Least-squares slope of log(y) against log(x): the exponent of y ~ x^k."""
    pts = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den if den else None


def _sizes(results):
    return [results["sizes"][k] for k in sorted(results["sizes"], key=int) if "converged" in results["sizes"][k]]


def _s(x, digits=2):
    return "—" if x is None else f"{x:.{digits}f}"


def _base(size, scenario):
    return (size.get("baseline") or {}).get(scenario)


def _base_cell(b, digits=1):
    if b is None:
        return "not run"
    return f"{b['wall']:.{digits}f}" + (f" (extrapolated from N={b['from']})" if b.get("extrapolated") else "")


def table(results):
    rows = ["| N | what | module wall (s) | of which the pass (s) | API requests | writes | peak RSS (MiB) "
            "| naive baseline (s) | baseline requests | baseline / module |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for size in _sizes(results):
        n = size["n"]
        for key, label in SCENARIOS:
            f = size[key]
            b = _base(size, key)
            ratio = f"{b['wall'] / f['wall']:.0f}x" if b else "—"
            rows.append(f"| {n} | {label} | {f['wall']:.2f} | {f['duration']:.2f} | {f['requests']} | {f['writes']} "
                        f"| {f['rss_mib']:.0f} | {_base_cell(b)} | {b['requests'] if b else '—'} | {ratio} |")
        fl = size["floor"]
        rows.append(f"| {n} | floor: the bare list calls | {fl['wall']:.2f} | {fl['seconds']:.3f} "
                    f"| {fl['requests']} | 0 "
                    f"| {fl['rss_mib']:.0f} | | | |")
        p = size["provision"]
        rows.append(f"| {n} | all passes from zero to Ready ({p['passes'] - 1} passes, controllers seeded) "
                    f"| {p['wall']:.2f} | | {p['requests']} | {p['writes']} | | | | |")
    return "\n".join(rows)


def ratios(results):
    rows = ["| N | baseline / module (converged, wall) | module / floor (wall) | pass / floor (in-process) |",
            "|---:|---:|---:|---:|"]
    for size in _sizes(results):
        c, fl, b = size["converged"], size["floor"], _base(size, "converged")
        base = "—"
        if b:
            base = "%.0fx%s" % (b["wall"] / c["wall"], " (extrapolated)" if b.get("extrapolated") else "")
        rows.append(f"| {size['n']} | {base} | {c['wall'] / fl['wall']:.1f}x | {c['duration'] / fl['seconds']:.1f}x |")
    return "\n".join(rows)


def exponents(results):
    sizes = _sizes(results)
    out = {}
    for name, fn in (("converged wall", lambda s: s["converged"]["wall"]),
                     ("converged pass", lambda s: s["converged"]["duration"]),
                     ("converged requests", lambda s: s["converged"]["requests"]),
                     ("first pass wall", lambda s: s["first"]["wall"]),
                     ("floor in-process", lambda s: s["floor"]["seconds"]),
                     ("baseline converged", lambda s: (_base(s, "converged") or {}).get("wall"))):
        pts = [(s["n"], fn(s)) for s in sizes if fn(s)]
        out[name] = slope(pts)
    return out


def local_slope(results, key=lambda s: s["converged"]["duration"]):
    """The exponent between the two largest N: how the per-order work grows once the constants are small."""
    sizes = _sizes(results)
    return slope([(s["n"], key(s)) for s in sizes[-2:]]) if len(sizes) >= 2 else None


def targets(results):
    by_n = dict((s["n"], s) for s in _sizes(results))
    rows = []
    size = by_n.get(TARGET_N)
    if size is None:
        rows.append(("converged pass over 1,000 orders", "not measured in this run", None))
    else:
        c, b = size["converged"], _base(size, "converged")
        rows.append(("at most 20 API requests (1,000 orders, converged)", f"{c['requests']}", c["requests"] <= 20))
        rows.append(("no write (1,000 orders, converged)", f"{c['writes']} writes", c["writes"] == 0))
        rows.append(("under 2 s of module time (1,000 orders, converged)",
                     f"{c['wall']:.2f} s wall ({c['duration']:.2f} s in the pass)", c["wall"] < 2.0))
        if b:
            ratio = b["wall"] / c["wall"]
            text = f"{ratio:.0f}x"
            if b.get("extrapolated"):
                measured = by_n.get(b["from"])
                text += f" (baseline extrapolated from N={b['from']}"
                if measured:
                    text += (f", where both were measured: {_base(measured, 'converged')['wall']:.0f} s against "
                             f"{measured['converged']['wall']:.2f} s, "
                             f"{_base(measured, 'converged')['wall'] / measured['converged']['wall']:.0f}x")
                text += ")"
            rows.append(("at least 20x faster than the naive baseline (1,000 orders)", text, ratio >= 20))
    exp = exponents(results)
    k = exp.get("converged pass")
    top = local_slope(results)
    if k is not None:
        rows.append(("cost grows linearly with N (log-log slope of the converged pass time)",
                     f"{k:.2f} over all N, {_s(top)} between the two largest N (wall with interpreter start: "
                     f"{_s(exp.get('converged wall'))} over all N)", (top if top is not None else k) <= 1.15))
    size = by_n.get(MEMORY_N)
    if size is None:
        rows.append(("memory under 300 MB at 5,000 orders", "not measured in this run", None))
    else:
        peak = max(size[key]["rss_mib"] for key, _ in SCENARIOS)
        mb = peak * 1.048576
        rows.append(("memory under 300 MB at 5,000 orders",
                     f"{size['converged']['rss_mib']:.0f} MiB converged, {peak:.0f} MiB ({mb:.0f} MB) peak "
                     "over the passes", mb < 300))
    return rows


def where_time_goes(results, repo):
    lines = []
    for size in _sizes(results):
        c, fl = size["converged"], size["floor"]
        start = c["wall"] - c["duration"]
        decide = max(c["duration"] - fl["seconds"], 0.0)
        lines.append(f"- N={size['n']}: {c['wall']:.2f} s = {start:.2f} s interpreter start, imports, argument "
                     f"parsing, connecting and printing the result + {c['duration']:.2f} s pass, of which "
                     f"{fl['seconds']:.2f} s are the bare list calls (floor) and {decide:.2f} s indexing and "
                     "deciding every order.")
    profiled = [s for s in _sizes(results) if s.get("profile")]
    at_target = [s for s in profiled if s["n"] == TARGET_N]
    profile = (at_target or profiled[-1:] or [{}])[0].get("profile")
    text = ""
    if profile and (Path(repo) / profile).exists():
        raw = (Path(repo) / profile).read_text().splitlines()
        keep = [line for line in raw if line.strip()][:70]
        text = "\n".join(keep)
    return "\n".join(lines), text, profile


def where_memory_goes(results):
    sized = [s for s in _sizes(results) if s.get("memory")]
    if not sized:
        return ""
    size = sized[-1]
    m = size["memory"]
    lists = m["lists"]
    total = sum(x["decoded_mib"] for x in lists)
    slim = sum(x["without_managed_fields_mib"] for x in lists)
    p = m["pass"]
    rows = [f"At N={size['n']} (converged pass, peak RSS {size['converged']['rss_mib']:.0f} MiB; the floor process, "
            f"which only lists and decodes, {size['floor']['rss_mib']:.0f} MiB). Measured by `benchmarks/memory.py` "
            "(tracemalloc, in-process, dry run):",
            "",
            f"- the interpreter: {m['rss_bare_python_mib']:.0f} MiB; after `import ansible.module_utils.basic`: "
            f"{m['rss_import_ansible_basic_mib']:.0f} MiB; after `import kubernetes` (imported by the edge for its "
            f"kubeconfig loader and ApiClient): {m['rss_import_kubernetes_mib']:.0f} MiB.",
            f"- the lists, decoded: {total:.0f} MiB of Python objects, {slim:.0f} MiB once "
            f"`metadata.managedFields` is dropped from every item ({(1 - slim / total) * 100 if total else 0:.0f} % "
            "of it is managedFields, which nothing in a pass reads); each list here is read whole, in one "
            "response:",
            "",
            "| list | items | response (MiB) | decoded (MiB) | without managedFields (MiB) |",
            "|---|---:|---:|---:|---:|"]
    for x in lists:
        rows.append(f"| `{x['path']}` | {x['items']} | {x['bytes_mib']:.1f} | {max(x['decoded_mib'], 0.0):.1f} "
                    f"| {max(x['without_managed_fields_mib'], 0.0):.1f} |")
    rows += ["",
             f"- the whole pass (lists held while every order is decided): {p['peak_traced_mib']:.0f} MiB traced peak; "
             f"{p['kept_after_pass_mib']:.0f} MiB kept after it (the per-order summaries), "
             f"{p['result_json_mib']:.1f} MiB as the module's JSON result (which AnsibleModule.exit_json copies "
             "once more to filter no_log values)."]
    return "\n".join(rows)


def _code_note(code):
    if not code:
        return ""
    if code.get("plugins_modified"):
        return (f"Code measured: commit {code['commit']} with uncommitted changes in "
                + ", ".join(f"`{f}`" for f in code["plugins_modified"]) + ".")
    return f"Code measured: `plugins/` as committed at {code['commit']}."


def write(results, repo):
    repo = Path(repo)
    docs = repo / "docs"
    docs.mkdir(exist_ok=True)
    plot(results, docs / "benchmarks.png")
    m = results.get("machine", {})
    exp = exponents(results)
    rows = targets(results)
    breakdown, profile_text, profile_name = where_time_goes(results, repo)
    missed = [r for r in rows if r[2] is False]
    fixed = results.get("baseline_fixed")
    md = [
        "# Benchmarks: the cost of a KeystoneUser pass",
        "",
        "Generated by `make bench` (`benchmarks/run.py`) — do not edit by hand. "
        f"Run of {results['started']} on {m.get('cpus')} cores ({m.get('cpu')}), Python {m.get('python')}, "
        f"load average at start {m.get('load')}. Other work shares this machine, so timings move by tens of "
        "percent between runs; request and write counts do not. " + _code_note(results.get("code")),
        "",
        "## What is measured",
        "",
        "Each N runs on its own fresh control plane (`bench`: etcd, kube-apiserver and kube-controller-manager of "
        "the local stack, port index 5) with no K-ORC and no ESO: the benchmark plays them by writing their status "
        "(a probe that found nothing, a User that applied its password, a PushSecret that pushed the current "
        "document), as upstream's own tests seed status. The N orders are spread over 5 assigned namespaces.",
        "",
        "- **module**: `plugins/modules/keystoneuser_reconcile.py` run as Ansible runs it (a fresh interpreter "
        "with an args file). *Module wall* is the whole process; *the pass* is the module's own `duration` "
        "(reads, decisions, writes). Peak RSS is that process's own `ru_maxrss`, taken by `benchmarks/rss.py` "
        "(a plain `wait4` from the benchmark would report at least the benchmark's own peak: Linux carries the "
        "replaced image's high-water mark over `exec`).",
        "- **first pass**: N new orders, nothing provisioned; one pass (finalizer, collision probe, status per "
        "order: it then waits for K-ORC's answer). *All passes from zero to Ready* adds up every pass until a "
        "pass changes nothing.",
        "- **converged pass**: every order Ready; median of "
        f"{results['args'].get('repeat', 3)} passes.",
        "- **1 % drift pass**: the password edited in 1 % of the delivered Secrets; one pass repairs them.",
        "- **floor**: the same list calls a converged pass makes, with the same client and JSON decoding, and "
        "no decision (`benchmarks/floor.py`). *Module wall* of the floor row is its process with interpreter "
        "start; *the pass* column is its in-process time.",
        "- **naive baseline**: `benchmarks/baseline/naive.yml`, what a platform team would write instead: "
        "`ansible-playbook` looping kubernetes.core (6.2.0, from the ansible 12.3.0 package) `k8s_info`/`k8s` "
        "tasks per order: get the order and its ControlPlane, get (or create) the password Secret, "
        "server-side apply the K-ORC User, the source Secret, the PushSecret and the delivered Secret, with the "
        "same names, labels, data and field manager (a module pass after it finds nothing to do). It does less "
        "than the module — no probe, no status (kubernetes.core cannot write the status subresource), no "
        "finalizer, no backup-first ordering — so the ratios favour the baseline. Pipelining on, facts off. "
        "Its requests are counted per module process (`baseline/counting/sitecustomize.py`). Its *first pass* "
        "runs on N further orders with no children. A baseline run is measured when its estimate fits the "
        f"budget ({results['args'].get('baseline_budget', 600):.0f} s; `make bench BENCH_ARGS='--baseline-budget "
        "7200'` measures N=1000 too, about 1.5 h per scenario on this machine), else extrapolated linearly "
        "(fixed cost of the playbook with no order"
        + (f": {fixed['wall']:.1f} s, {fixed['requests']} request{'' if fixed['requests'] == 1 else 's'}"
           if fixed else "")
        + ", plus the per-order cost of the largest measured N) and marked so.",
        "",
        "## Results",
        "",
        table(results),
        "",
        ratios(results),
        "",
        "![time and API requests against N](benchmarks.png)",
        "",
        "## Targets (issue 7)",
        "",
        "| target | measured | met |",
        "|---|---|---|",
    ]
    for what, value, ok in rows:
        md.append(f"| {what} | {value} | {'yes' if ok else ('—' if ok is None else '**no**')} |")
    md += [
        "",
        "Fitted exponents (log-log slope against N): "
        + ", ".join(f"{k} {_s(v)}" for k, v in exp.items() if v is not None) + "; between the two largest N: "
        + f"converged pass {_s(local_slope(results))}, "
        + f"floor {_s(local_slope(results, lambda s: s['floor']['seconds']))}. "
        "A constant part (interpreter start, the fixed number of requests) flattens a slope below 1; the "
        "per-order work is what grows.",
        "",
        "## Where the time goes",
        "",
        breakdown,
        "",
    ]
    memory = where_memory_goes(results)
    if memory:
        md += ["## Where the memory goes", "", memory, ""]
    if missed:
        md += ["Missed: " + "; ".join(r[0] for r in missed) + ". See the breakdowns above and the profile below.", ""]
    if profile_text:
        md += [f"pyinstrument profile of one converged module run (`{profile_name}`, trimmed):", "",
               "```", profile_text, "```", ""]
    (docs / "benchmarks.md").write_text("\n".join(md))


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = _sizes(results)
    ns = [s["n"] for s in sizes]
    fig, (ax_t, ax_r) = plt.subplots(1, 2, figsize=(12, 6.2))

    def line(ax, fn, label, style, color):
        pts = [(s["n"], fn(s)) for s in sizes if fn(s) is not None]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, label=label)

    def baseline(ax, scenario, key, style, label):
        """Measured points solid, extrapolated ones hollow on a dotted continuation."""
        entries = [(s["n"], _base(s, scenario)) for s in sizes if _base(s, scenario)]
        measured = [(n, b[key]) for n, b in entries if not b.get("extrapolated")]
        extra = [(n, b[key]) for n, b in entries if b.get("extrapolated")]
        if measured:
            ax.plot(*zip(*measured), style, color="tab:red", label=f"{label} (measured)")
        if extra:
            ax.plot(*zip(*(measured[-1:] + extra)), ":", marker=style[0], fillstyle="none", color="tab:red",
                    label=f"{label} (extrapolated)")

    line(ax_t, lambda s: s["converged"]["wall"], "module, converged (wall)", "o-", "tab:blue")
    line(ax_t, lambda s: s["converged"]["duration"], "module, converged (the pass)", "o--", "tab:cyan")
    line(ax_t, lambda s: s["drift"]["wall"], "module, 1 % drift (wall)", "^-", "tab:orange")
    line(ax_t, lambda s: s["first"]["wall"], "module, first pass (wall)", "s-", "tab:green")
    line(ax_t, lambda s: s["floor"]["seconds"], "floor: bare list calls (in-process)", "x:", "tab:gray")
    baseline(ax_t, "converged", "wall", "D-", "naive playbook, converged")
    baseline(ax_t, "first", "wall", "v-", "naive playbook, first pass")
    ax_t.set_title("time per pass (log-log)")
    ax_t.set_ylabel("seconds")

    line(ax_r, lambda s: s["converged"]["requests"], "module, converged (= floor)", "o-", "tab:blue")
    line(ax_r, lambda s: s["drift"]["requests"], "module, 1 % drift", "^-", "tab:orange")
    line(ax_r, lambda s: s["first"]["requests"], "module, first pass", "s-", "tab:green")
    baseline(ax_r, "converged", "requests", "D-", "naive playbook, converged")
    ax_r.set_title("API requests per pass (log-log)")
    ax_r.set_ylabel("requests")
    for ax in (ax_t, ax_r):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("orders (N)")
        ax.set_xticks(ns)
        ax.set_xticklabels([str(n) for n in ns])
        ax.minorticks_off()
        ax.set_xticks(ns)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    repo = Path(__file__).resolve().parents[1]
    data = json.loads((repo / ".bench" / "results.json").read_text())
    write(data, repo)
    print(table(data))
    sys.exit(0)
