"""Where a converged pass's memory goes (run by run.py at the largest N; prints JSON).

Peak RSS says how much, not what. This re-does a converged pass in-process, dry-run (it cannot write),
and measures with tracemalloc: each list's whole response (one request, no paging) and the Python
objects it decodes into, the share of ``metadata.managedFields`` in them, the whole pass as the edge
makes it, and the module's result as Ansible would print it. The ``kubernetes`` package's own import
is measured as RSS in a separate interpreter.

    python benchmarks/memory.py KUBECONFIG      (PYTHONPATH=.collections)
"""
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

MIB = 1024.0 * 1024.0


def rss_of(code):
    """Peak RSS of a fresh interpreter running ``code`` (through rss.py, see there why)."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as figures:
        subprocess.run([sys.executable, str(Path(__file__).with_name("rss.py")), figures.name,
                        sys.executable, "-c", code], check=True)
        return int(figures.read().split()[0]) / 1024.0


def main(kubeconfig):
    from ansible_collections.c5c3.orders.plugins.module_utils.k8s.client import KubeClient
    from ansible_collections.c5c3.orders.plugins.module_utils.k8s.runner import make_filter, run_pass
    from ansible_collections.c5c3.orders.plugins.module_utils.k8s.service import KubeService

    sys.path.insert(0, str(Path(__file__).parent))
    from floor import DISCOVERY, LISTS
    calls = [("/apis/" + DISCOVERY, None)] + [
        (resource.collection(), {"labelSelector": selector} if selector else None) for resource, selector in LISTS]

    report = {"rss_bare_python_mib": rss_of("pass"),
              "rss_import_kubernetes_mib": rss_of("import kubernetes"),
              "rss_import_ansible_basic_mib": rss_of("import ansible.module_utils.basic"),
              "lists": []}
    client = KubeClient({"kubeconfig": kubeconfig})
    tracemalloc.start()
    for path, query in calls:  # each list whole, as one response, to see what it weighs
        raw = client._api.call_api(path, "GET", query_params=list((query or {}).items()),
                                   header_params={"Accept": "application/json"}, auth_settings=["BearerToken"],
                                   _preload_content=False, _return_http_data_only=True).data
        before = tracemalloc.get_traced_memory()[0]
        body = json.loads(raw)
        decoded = tracemalloc.get_traced_memory()[0] - before
        items = body.get("items") or []
        for item in items:
            (item.get("metadata") or {}).pop("managedFields", None)
        slim = tracemalloc.get_traced_memory()[0] - before
        report["lists"].append({"path": path, "items": len(items), "bytes_mib": len(raw) / MIB,
                                "decoded_mib": decoded / MIB, "without_managed_fields_mib": slim / MIB})
        del raw, body, items
    tracemalloc.stop()

    tracemalloc.start()
    wanted, limited = make_filter()
    started = time.monotonic()
    result = run_pass(KubeService(client, "c5c3-orders", dry_run=True), {}, wanted, limited)
    seconds = time.monotonic() - started
    current, peak = tracemalloc.get_traced_memory()
    out = json.dumps({"orders": result.orders})
    report["pass"] = {"seconds": seconds, "orders": len(result.orders), "changed": result.changed,
                      "peak_traced_mib": peak / MIB, "kept_after_pass_mib": current / MIB,
                      "result_json_mib": len(out) / MIB}
    tracemalloc.stop()
    report["rss_this_process_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
