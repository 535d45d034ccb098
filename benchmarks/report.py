"""docs/benchmarks.md and docs/benchmarks.png from the figures run.py gathered (.bench/results.json).

    python benchmarks/report.py      # regenerate both from the last results, without measuring again
"""
import json
import math
import os
import platform
import subprocess
import sys
from pathlib import Path

SCENARIOS = (("first", "first pass (nothing provisioned)"), ("converged", "converged pass"),
             ("drift", "1 % drift pass"))
PLAYBOOKS = (("bulk", "bulk playbook"), ("naive", "naive playbook"))
TARGET_N = 1000
MEMORY_N = 5000
FLOOR_NS = (1000, 5000)
FIRST_PASS_SECONDS = 15.0
MEMORY_MIB = 150.0
FLOOR_RATIO = 1.3
BULK_RATIO = 10.0
BEFORE_PROFILE = "benchmarks/profiles/converged-1000-before.txt"


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
    def git(*args):
        out = subprocess.run(["git", "-C", str(repo)] + list(args), capture_output=True, text=True)
        return out.stdout.rstrip() if out.returncode == 0 else ""
    modified = [line[3:] for line in git("status", "--porcelain", "--", "plugins").splitlines() if line.strip()]
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


def _base(size, playbook, scenario):
    return ((size.get("baselines") or {}).get(playbook) or {}).get(scenario)


def _base_cell(b, digits=1):
    if b is None:
        return "not run"
    return f"{b['wall']:.{digits}f}" + (f" (extrapolated from a run over {b['from']} orders)"
                                         if b.get("extrapolated") else "")


def _throttled(f):
    value = f.get("throttled")
    return "—" if value is None else str(value)


def _cpu(x):
    return "—" if x is None else f"{x:.2f}"


def table(results):
    rows = ["| N | what | module wall (s) | of which the pass (s) | module CPU (s) | API server + etcd CPU (s) "
            "| API requests | writes | answered 429 | peak RSS (MiB) |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for size in _sizes(results):
        n = size["n"]
        for key, label in SCENARIOS:
            f = size[key]
            rows.append(f"| {n} | {label} | {f['wall']:.2f} | {f['duration']:.2f} | {_cpu(f.get('cpu'))} "
                        f"| {_cpu(f.get('server_cpu'))} | {f['requests']} | {f['writes']} | {_throttled(f)} "
                        f"| {f['rss_mib']:.0f} |")
        fl = size["floor"]
        rows.append(f"| {n} | floor: the bare list calls | {fl['wall']:.2f} | {fl['seconds']:.3f} "
                    f"| {_cpu(fl.get('cpu'))} | | {fl['requests']} | 0 | | {fl['rss_mib']:.0f} |")
        p = size["provision"]
        rows.append(f"| {n} | all passes from zero to Ready ({p['passes'] - 1} passes, controllers seeded) "
                    f"| {p['wall']:.2f} | | | | {p['requests']} | {p['writes']} | | |")
    return "\n".join(rows)


def baseline_table(results):
    rows = ["| N | playbook | scenario | playbook wall (s) | playbook requests | module wall (s) | playbook / module |",
            "|---:|---|---|---:|---:|---:|---:|"]
    for size in _sizes(results):
        for playbook, label in PLAYBOOKS:
            for key, scenario in SCENARIOS:
                b = _base(size, playbook, key)
                if b is None:
                    continue
                ratio = b["wall"] / size[key]["wall"]
                rows.append(f"| {size['n']} | {label} | {scenario} | {_base_cell(b)} | {b['requests']} "
                            f"| {size[key]['wall']:.2f} | {ratio:.0f}x |")
    return "\n".join(rows)


def cpu_ratio(size):
    """Module CPU / floor CPU, whole processes (both import Ansible and the client): robust under load."""
    c, fl = size["converged"], size["floor"]
    return c["cpu"] / fl["cpu"] if c.get("cpu") and fl.get("cpu") else None


def ratios(results):
    rows = ["| N | bulk / module (converged, wall) | naive / module (converged, wall) | module / floor (CPU) "
            "| module / floor (wall) | pass / floor (in-process wall) |",
            "|---:|---:|---:|---:|---:|---:|"]
    for size in _sizes(results):
        c, fl = size["converged"], size["floor"]
        cells = []
        for playbook, _label in PLAYBOOKS:
            b = _base(size, playbook, "converged")
            cells.append("—" if not b else "%.0fx%s" % (b["wall"] / c["wall"], " (extrapolated)"
                                                        if b.get("extrapolated") else ""))
        ratio = cpu_ratio(size)
        rows.append(f"| {size['n']} | {cells[0]} | {cells[1]} | {'—' if ratio is None else f'{ratio:.2f}x'} "
                    f"| {c['wall'] / fl['wall']:.2f}x | {c['duration'] / fl['seconds']:.2f}x |")
    return "\n".join(rows)


def exponents(results):
    sizes = _sizes(results)
    out = {}
    for name, fn in (("converged wall", lambda s: s["converged"]["wall"]),
                     ("converged pass", lambda s: s["converged"]["duration"]),
                     ("converged requests", lambda s: s["converged"]["requests"]),
                     ("first pass wall", lambda s: s["first"]["wall"]),
                     ("floor in-process", lambda s: s["floor"]["seconds"]),
                     ("bulk converged", lambda s: (_base(s, "bulk", "converged") or {}).get("wall"))):
        out[name] = slope([(s["n"], fn(s)) for s in sizes if fn(s)])
    return out


def local_slope(results, key=lambda s: s["converged"]["duration"]):
    """The exponent between the two largest N: how the per-order work grows once the constants are small."""
    sizes = _sizes(results)
    return slope([(s["n"], key(s)) for s in sizes[-2:]]) if len(sizes) >= 2 else None


def targets(results):
    """(target, measured, met) rows: the targets of docs/benchmarks.md ("Targets"), the converged pass's constant cost
    last, each from this run's figures."""
    by_n = dict((s["n"], s) for s in _sizes(results))
    rows = []
    size = by_n.get(TARGET_N)
    bulk = _base(size, "bulk", "converged") if size else None
    if bulk:
        ratio = bulk["wall"] / size["converged"]["wall"]
        text = f"{ratio:.0f}x ({bulk['wall']:.1f} s against {size['converged']['wall']:.2f} s"
        text += f", bulk extrapolated from a run over {bulk['from']} orders)" if bulk.get("extrapolated") else ")"
        rows.append((f"converged pass at 1,000 orders at least {BULK_RATIO:.0f}x ahead of the bulk playbook", text,
                     ratio >= BULK_RATIO))
    else:
        rows.append(("converged pass at 1,000 orders at least 10x ahead of the bulk playbook", "not measured", None))
    for n in FLOOR_NS:
        size = by_n.get(n)
        if size is None:
            rows.append((f"converged pass within {FLOOR_RATIO}x of the floor at {n:,} orders", "not measured", None))
            continue
        c, fl = size["converged"], size["floor"]
        cpu = cpu_ratio(size)
        inproc, wall = c["duration"] / fl["seconds"], c["wall"] / fl["wall"]
        text = (f"{_s(cpu)}x in CPU seconds ({_cpu(c.get('cpu'))} s against {_cpu(fl.get('cpu'))} s, whole processes); "
                f"in wall time {wall:.2f}x with interpreter start ({c['wall']:.2f} s against {fl['wall']:.2f} s), "
                f"{inproc:.2f}x in-process ({c['duration']:.2f} s against {fl['seconds']:.2f} s)")
        rows.append((f"converged pass within {FLOOR_RATIO}x of the floor at {n:,} orders", text,
                     None if cpu is None else cpu <= FLOOR_RATIO))
    size = by_n.get(MEMORY_N)
    if size is None:
        rows.append((f"first pass over 5,000 new orders under {FIRST_PASS_SECONDS:.0f} s", "not measured", None))
        rows.append((f"memory under {MEMORY_MIB:.0f} MiB peak at 5,000 orders", "not measured", None))
    else:
        f = size["first"]
        rows.append((f"first pass over 5,000 new orders under {FIRST_PASS_SECONDS:.0f} s, no 429 storm",
                     f"{f['wall']:.1f} s wall ({f['duration']:.1f} s in the pass), {f['writes']} writes, "
                     f"{_throttled(f)} answered 429", f["wall"] < FIRST_PASS_SECONDS))
        peak = max(size[key]["rss_mib"] for key, _ in SCENARIOS)
        rows.append((f"memory under {MEMORY_MIB:.0f} MiB peak at 5,000 orders",
                     f"{peak:.0f} MiB peak over the passes ({size['converged']['rss_mib']:.0f} MiB converged)",
                     peak < MEMORY_MIB))
    size = by_n.get(TARGET_N)
    if size is not None:
        c = size["converged"]
        rows.append(("converged pass at 1,000 orders: at most 20 API requests and no write",
                     f"{c['requests']} requests, {c['writes']} writes", c["requests"] <= 20 and c["writes"] == 0))
        rows.append(("converged pass at 1,000 orders: under 2 s of module time",
                     f"{c['wall']:.2f} s wall ({c['duration']:.2f} s in the pass)", c["wall"] < 2.0))
    top = local_slope(results)
    if top is not None:
        rows.append(("converged pass: cost grows linearly with N (log-log slope, two largest N)",
                     f"{top:.2f}", top <= 1.15))
    return rows


def where_time_goes(results):
    lines = []
    for size in _sizes(results):
        c, fl = size["converged"], size["floor"]
        line = (f"- N={size['n']}: {c['wall']:.2f} s wall = {c['wall'] - c['duration']:.2f} s interpreter start, "
                f"imports, argument parsing, connecting and printing the result + {c['duration']:.2f} s pass")
        if c.get("cpu") and fl.get("cpu") and fl.get("lists_cpu") is not None:
            start = fl["cpu"] - fl["lists_cpu"]
            rest = c["cpu"] - fl["cpu"]
            line += (f". In CPU seconds: {c['cpu']:.2f} s = {start:.2f} s interpreter start and imports (the floor "
                     f"process's, before it lists) + {fl['lists_cpu']:.2f} s the list calls and their decoding (the "
                     f"floor's) + {rest:.2f} s the pass's own work: indexing, deciding {size['n']} orders "
                     f"({rest / size['n'] * 1e6:.0f} µs each, all included), and printing the result.")
        lines.append(line)
    return "\n".join(lines)


def where_first_pass_goes(results):
    """The first pass's cost split between this process and the API server (with etcd), from CPU seconds."""
    cores = (results.get("machine") or {}).get("cpus") or 1
    lines = []
    for size in _sizes(results):
        f = size["first"]
        if f.get("cpu") is None or f.get("server_cpu") is None or not f["writes"]:
            continue
        per_write = f["server_cpu"] / f["writes"] * 1000
        bound = (f["server_cpu"] + f["cpu"]) / cores
        lines.append(f"- N={size['n']}: {f['wall']:.1f} s wall for {f['writes']} writes and {f['requests']} requests "
                     f"({f['writes'] / f['wall']:.0f} writes/s); the module used {f['cpu']:.1f} CPU s "
                     f"({f['cpu'] / size['n'] * 1000:.2f} ms per order: its reads, every decision, encoding and TLS), "
                     f"kube-apiserver and etcd {f['server_cpu']:.1f} CPU s ({per_write:.1f} ms per write: admission, "
                     f"CRD schema and CEL validation, managedFields, storage). On {cores} cores shared by both, the "
                     f"pass cannot take less than {bound:.1f} s whatever its concurrency; {f['throttled']} requests "
                     "were answered 429.")
    return "\n".join(lines)


def _profile_text(repo, name, lines=60):
    path = Path(repo) / name
    if not path.exists():
        return ""
    return "\n".join([line for line in path.read_text().splitlines() if line.strip()][:lines])


def where_memory_goes(results):
    sized = [s for s in _sizes(results) if s.get("memory")]
    if not sized:
        return ""
    size = sized[-1]
    m = size["memory"]
    lists = m["lists"]
    total = sum(x["decoded_mib"] for x in lists)
    slim = sum(x["without_managed_fields_mib"] for x in lists)
    shared = sum(x.get("strings_shared_mib", x["without_managed_fields_mib"]) for x in lists)
    p = m["pass"]
    k8s = m["rss_import_ansible_basic_and_kubernetes_mib"] - m["rss_import_ansible_basic_mib"]
    rows = [f"At N={size['n']} (converged pass, peak RSS {size['converged']['rss_mib']:.0f} MiB; the floor process, "
            f"which only lists and decodes, {size['floor']['rss_mib']:.0f} MiB). Measured by `benchmarks/memory.py` "
            "(RSS of fresh interpreters; tracemalloc in-process, dry run):",
            "",
            f"- a bare interpreter: {m['rss_bare_python_mib']:.0f} MiB; after `import ansible.module_utils.basic`: "
            f"{m['rss_import_ansible_basic_mib']:.0f} MiB; after that and `import kubernetes`: "
            f"{m['rss_import_ansible_basic_and_kubernetes_mib']:.0f} MiB (the `kubernetes` package alone: "
            f"{m['rss_import_kubernetes_mib']:.0f} MiB); after importing the module with the whole edge and core: "
            f"{m['rss_import_module_mib']:.0f} MiB (the library imported lean, as the edge does: see below). Imported "
            f"whole, the `kubernetes` client would cost **{k8s:.0f} MiB** of every module process before it reads "
            "anything.",
            f"- the lists, decoded: {total:.0f} MiB of Python objects, {slim:.0f} MiB once "
            f"`metadata.managedFields` is dropped from every item, as the edge does page by page "
            f"({(1 - slim / total) * 100 if total else 0:.0f} % of it is managedFields), and {shared:.0f} MiB once "
            "equal strings are one object (`k8s/shared.py`, as a pass's lists are held); each list here is read "
            "whole, in one response:",
            "",
            "| list | items | response (MiB) | decoded (MiB) | without managedFields (MiB) | strings shared (MiB) |",
            "|---|---:|---:|---:|---:|---:|"]
    for x in lists:
        rows.append(f"| `{x['path']}` | {x['items']} | {x['bytes_mib']:.1f} | {max(x['decoded_mib'], 0.0):.1f} "
                    f"| {max(x['without_managed_fields_mib'], 0.0):.1f} "
                    + (f"| {max(x['strings_shared_mib'], 0.0):.1f} |" if 'strings_shared_mib' in x else '| — |'))
    rows += ["",
             f"- the whole pass (lists held while every order is decided): {p['peak_traced_mib']:.0f} MiB traced peak; "
             f"{p['kept_after_pass_mib']:.0f} MiB kept after it (the per-order results the module returns), "
             f"{p['result_json_mib']:.1f} MiB as the module's JSON result (which AnsibleModule.exit_json copies "
             "once more to filter no_log values)."]
    return "\n".join(rows)


def kubernetes_decision(results):
    sized = [s for s in _sizes(results) if s.get("memory")]
    if not sized:
        return ""
    m = sized[-1]["memory"]
    whole = m["rss_import_ansible_basic_and_kubernetes_mib"] - m["rss_import_ansible_basic_mib"]
    lean = m.get("rss_import_ansible_basic_and_kubernetes_lean_mib")
    lean_cost = None if lean is None else lean - m["rss_import_ansible_basic_mib"]
    return "\n".join([
        f"Imported whole, the `kubernetes` package costs {whole:.0f} MiB of resident memory in every module "
        "process, and most of its import time: its `__init__` imports every generated API class and all ~700 model "
        "classes (`python -X importtime -c 'import kubernetes'`), and `kubernetes.config` cannot be imported "
        "without running it. The edge uses three things of it: the kubeconfig and in-cluster loaders (contexts, "
        "client certificates and keys, inline `-data` fields, tokens and token files, exec plugins and auth "
        "providers with their refresh), the `Configuration` they fill, and the TLS connection pool of its REST "
        "client; requests are sent raw and decoded with `json`, never through the models.",
        "",
        "**Decision: the library stays, imported lean** (`plugins/module_utils/k8s/lean.py`). Replacing it would "
        "mean re-implementing every connection option users rely on (`K8S_AUTH_*`, kubeconfig contexts, exec and "
        "auth-provider plugins, token refresh) with the same behaviour byte for byte. Instead the edge registers "
        "`kubernetes`, `kubernetes.client` and an empty `kubernetes.client.models` as plain packages over the "
        "library's own folders and imports only the library's own `client.configuration`, `client.exceptions`, "
        "`client.rest`, `client.api_client` and `config` modules from its own files: every connection option runs "
        "the very code it ran before (a process that imported the library whole keeps it whole; a library laid out "
        "otherwise is imported whole). "
        + ("" if lean_cost is None else
           f"Measured here: {lean_cost:.0f} MiB instead of {whole:.0f} MiB on top of Ansible's own imports. ")
        + "`tests/unit/k8s/test_lean_import.py` loads the same kubeconfigs (inline certificate data, tokens, "
        "contexts, proxies, options over the kubeconfig, a file, a missing file) through both imports in fresh "
        "interpreters and requires identical `Configuration` settings and identical answers to a request.",
    ])


def _code_note(code):
    if not code:
        return ""
    if code.get("plugins_modified"):
        return (f"Code measured: commit {code['commit']} with uncommitted changes in "
                + ", ".join(f"`{f}`" for f in code["plugins_modified"]) + ".")
    return f"Code measured: `plugins/` as committed at {code['commit']}."


def write(results, repo, plugins=()):
    repo = Path(repo)
    docs = repo / "docs"
    docs.mkdir(exist_ok=True)
    plot(results, docs / "benchmarks.png")
    m = results.get("machine", {})
    args = results.get("args", {})
    exp = exponents(results)
    rows = targets(results)
    for plugin in plugins:  # a scenario's own goals (its module's ``goals(results)``) join the Targets table
        rows += list(getattr(plugin.module, "goals", lambda _results: [])(results))
    missed = [r for r in rows if r[2] is False]
    fixed = results.get("baseline_fixed") or {}
    profiled = [s for s in _sizes(results) if s.get("profile")]
    profile = (([s for s in profiled if s["n"] == TARGET_N] or profiled[-1:] or [{}])[0]).get("profile")
    md = [
        "# Benchmarks: the cost of a KeystoneUser pass",
        "",
        "Generated by `make bench` (`benchmarks/run.py`) — do not edit by hand; `make bench-report` rewrites it "
        "from the last run's figures (`.bench/results.json`). "
        f"Run of {results['started']} on {m.get('cpus')} cores ({m.get('cpu')}), Python {m.get('python')}, "
        f"load average at start {m.get('load')}. Other work shares this machine, so timings move by tens of "
        "percent between runs (and more when the load average is above the core count); request and write counts "
        "do not. " + _code_note(results.get("code"))
        + "".join(f" N={s['n']} was measured again (`--merge`) on commit {s['code']['commit']}"
                  + (" with uncommitted changes in plugins/" if s["code"].get("plugins_modified") else "")
                  + " (its baselines kept from the run)." for s in _sizes(results) if s.get("code")),
        "",
        "## What is measured, and by which command",
        "",
        "Every figure below comes from one `make bench` run (sizes "
        f"{', '.join(str(n) for n in args.get('sizes', []))}). Each N runs on its own fresh control plane (`bench`, "
        "`benchmarks/cluster.py`: etcd, kube-apiserver and kube-controller-manager of the local stack, port index "
        "5, with API Priority and Fairness on, as kube-apiserver defaults) with no K-ORC and no ESO: the benchmark "
        "plays them by writing their status (a probe that found nothing, a User that applied its password, a "
        "PushSecret that pushed the current document), as upstream's own tests seed status. Everything measured "
        "talks to it as a ServiceAccount bound to cluster-admin (the identity a controller has in a cluster, "
        "classified by the default FlowSchemas as `workload-low`, never exempt). The N orders are spread over 5 "
        "assigned namespaces.",
        "",
        "- **module** (`ANSIBLE_MODULE_ARGS` file + `python plugins/modules/keystoneuser_reconcile.py`, "
        "`benchmarks/measure.py`): the module run as Ansible runs it, in a fresh interpreter. *Module wall* is the "
        "whole process; *the pass* is the module's own `duration` (reads, decisions, writes). Peak RSS is that "
        "process's own `ru_maxrss`, taken by `benchmarks/rss.py`. *Answered 429* is how many requests the API "
        "server refused with 429 during the run, read from its own `apiserver_request_total` metric.",
        "- **first pass**: N new orders, nothing provisioned; one pass (finalizer, collision probe, status per "
        "order). Orders are decided in turn and their writes carried out by 8 workers, each order's actions in "
        "order on one worker, at most 8 requests in flight, a 429 waited out as `Retry-After` says "
        "(`plugins/module_utils/k8s/runner.py`, `throttle.py`). *All passes from zero to Ready* adds up every pass "
        "until a pass changes nothing.",
        "- **converged pass**: every order Ready; median of "
        f"{args.get('repeat', 3)} passes.",
        "- **1 % drift pass**: the password edited in 1 % of the delivered Secrets; one pass repairs them.",
        "- **floor** (`python benchmarks/floor.py KUBECONFIG`): the list calls a converged pass makes, following the "
        "access contract, through the same client and `KubeService.list` (paging, JSON decoding, managedFields "
        "dropped) and nothing else; the run checks that the pass made as many requests. It imports "
        "`ansible.module_utils.basic` and the client as the module does, so *module wall* and *module CPU* of the "
        "floor row are what a module process costs that only lists; *the pass* column is its in-process time. "
        "Module / floor in CPU seconds is the ratio that stays put when the machine is loaded.",
        "- **bulk playbook** (`ansible-playbook benchmarks/baseline/bulk.yml`): what a competent platform team "
        "writes with kubernetes.core (6.2.0, from the ansible 12.3.0 package) and core Jinja: one `k8s_info` per "
        "kind (orders, ControlPlanes, the password Secrets), every desired object computed in one Jinja template "
        "(`bulk_definitions.j2`; a new password per new order from the core `password` lookup), and one "
        "`kubernetes.core.k8s` task server-side applying all of them (`continue_on_error`). It projects the same "
        "children and delivered Secret, with the same names, labels, data and field manager. It does not write any "
        "status (kubernetes.core cannot write the status subresource), set a finalizer or tear anything down, probe "
        "Keystone for a colliding user, wait for ESO's proof of the backup before delivering, rotate, or check "
        "consent; it re-applies every object on every run, which is how it repairs drift. So the ratios favour it.",
        "- **naive playbook** (`ansible-playbook benchmarks/baseline/naive.yml`): the first round's baseline, "
        "kubernetes.core `k8s_info`/`k8s` tasks looping over the orders one at a time (get the order and its "
        "ControlPlane, get or create the password Secret, apply each child: seven module runs per order). Measured "
        f"for {', '.join(args.get('naive_scenarios') or ['—'])} only, over the first {args.get('naive_orders', 10)} "
        "orders listed (`-e order_limit`), and extrapolated to N from that run's cost per order: on this loaded "
        "machine a module run of it takes seconds, and its cost per order is the same for every order.",
        "- Both playbooks: pipelining on, facts off, requests counted per module process "
        "(`baseline/counting/sitecustomize.py`); their *first pass* runs on N further orders with no children. A "
        f"converged run is measured when its estimate fits the budget ({args.get('baseline_budget', 600):.0f} s, "
        "`make bench BENCH_ARGS='--baseline-budget 7200'` for more); drift and first runs at the smallest N (the "
        "playbooks apply every object on every run, so their cost per order does not change with N). The rest is "
        "extrapolated linearly (fixed cost of the playbook with no order"
        + "".join(f"; {k}: {v['wall']:.1f} s, {v['requests']} requests" for k, v in sorted(fixed.items()))
        + ", plus the per-order cost of the largest measured N) and marked so.",
        "- **memory** (`python benchmarks/memory.py KUBECONFIG`) and the **profile** (`python -m pyinstrument` "
        "around the module) are taken in the same run, at the largest N and at N=1000.",
        "",
        "## Results",
        "",
        table(results),
        "",
        "### Against the playbooks",
        "",
        baseline_table(results),
        "",
        ratios(results),
        "",
        "![time and API requests against N](benchmarks.png)",
        "",
        "## Targets",
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
        "A constant part (interpreter start, the fixed number of requests) flattens a slope below 1.",
        "",
    ]
    if missed:
        md += ["Missed in this run: " + "; ".join(r[0] for r in missed) + ". Why: see *Where the time goes* and "
               "*What the numbers mean* below.", ""]
    md += ["## Where the time goes", "", "A converged pass:", "", where_time_goes(results), "",
           "A first pass (CPU seconds of the module process and of the bench cluster's kube-apiserver and etcd, "
           "`/proc/<pid>/stat`, during the run):", "", where_first_pass_goes(results), ""]
    memory = where_memory_goes(results)
    if memory:
        md += ["## Where the memory goes", "", memory, "", "## The `kubernetes` client: what it costs, and how it "
               "stays", "", kubernetes_decision(results), ""]
    notes = Path(__file__).with_name("notes.md")
    if notes.exists():
        md += ["## What the numbers mean", "", notes.read_text().strip(), ""]
    for plugin in plugins:
        md += [f"## {plugin.TITLE}", "", plugin.report(results).strip(), ""]
    after = _profile_text(repo, profile) if profile else ""
    before = _profile_text(repo, BEFORE_PROFILE)
    if after:
        md += [f"## Profile of a converged pass at N={TARGET_N}, after (`{profile}`, this run, trimmed)", "",
               "```", after, "```", ""]
    if before:
        md += [f"## The same profile before this round's changes (`{BEFORE_PROFILE}`, trimmed)", "",
               "Taken during development on the code of commit 19c0b2e, on the same kind of bench cluster while "
               "the machine was under heavy load (so its wall times are stretched; the shares are what counts).",
               "", "```", before, "```", ""]
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

    def baseline(ax, playbook, scenario, key, style, color, label):
        """Measured points solid, extrapolated ones hollow on a dotted continuation."""
        entries = [(s["n"], _base(s, playbook, scenario)) for s in sizes if _base(s, playbook, scenario)]
        measured = [(n, b[key]) for n, b in entries if not b.get("extrapolated")]
        extra = [(n, b[key]) for n, b in entries if b.get("extrapolated")]
        if measured:
            ax.plot(*zip(*measured), style, color=color, label=f"{label} (measured)")
        if extra:
            ax.plot(*zip(*(measured[-1:] + extra)), ":", marker=style[0], fillstyle="none", color=color,
                    label=f"{label} (extrapolated)")

    line(ax_t, lambda s: s["converged"]["wall"], "module, converged (wall)", "o-", "tab:blue")
    line(ax_t, lambda s: s["converged"]["duration"], "module, converged (the pass)", "o--", "tab:cyan")
    line(ax_t, lambda s: s["drift"]["wall"], "module, 1 % drift (wall)", "^-", "tab:orange")
    line(ax_t, lambda s: s["first"]["wall"], "module, first pass (wall)", "s-", "tab:green")
    line(ax_t, lambda s: s["floor"]["seconds"], "floor: bare list calls (in-process)", "x:", "tab:gray")
    baseline(ax_t, "bulk", "converged", "wall", "D-", "tab:purple", "bulk playbook, converged")
    baseline(ax_t, "naive", "converged", "wall", "D-", "tab:red", "naive playbook, converged")
    ax_t.set_title("time per pass (log-log)")
    ax_t.set_ylabel("seconds")

    line(ax_r, lambda s: s["converged"]["requests"], "module, converged (= floor)", "o-", "tab:blue")
    line(ax_r, lambda s: s["drift"]["requests"], "module, 1 % drift", "^-", "tab:orange")
    line(ax_r, lambda s: s["first"]["requests"], "module, first pass", "s-", "tab:green")
    baseline(ax_r, "bulk", "converged", "requests", "D-", "tab:purple", "bulk playbook, converged")
    baseline(ax_r, "naive", "converged", "requests", "D-", "tab:red", "naive playbook, converged")
    ax_r.set_title("API requests per pass (log-log)")
    ax_r.set_ylabel("requests")
    for ax in (ax_t, ax_r):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("orders (N)")
        ax.minorticks_off()
        ax.set_xticks(ns)
        ax.set_xticklabels([str(n) for n in ns])
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    import scenarios  # noqa: E402

    repo = here.parent
    data = json.loads((repo / ".bench" / "results.json").read_text())
    write(data, repo, scenarios.load(here, (data.get("args") or {}).get("scenarios")))
    print(table(data))
    sys.exit(0)
