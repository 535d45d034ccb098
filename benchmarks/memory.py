"""Where a converged pass's memory goes (run by run.py at the largest N; prints JSON).

Peak RSS says how much, not what. This re-does a converged pass in-process, dry-run (it cannot write),
and measures with tracemalloc: each list's whole response (one request, no paging) and the Python
objects it decodes into, the share of ``metadata.managedFields`` in them, the whole pass as the edge
makes it, and the module's result as Ansible would print it. The ``kubernetes`` package's own import
and the module's own imports are measured as RSS, each in a separate interpreter.

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
# the library as the edge imports it (k8s/lean.py: without its generated API and model classes)
IMPORT_LEAN = ("import ansible.module_utils.basic; "
               "from ansible_collections.c5c3.orders.plugins.module_utils.k8s import lean; lean.load()")
# what the module imports before it reads anything (its own imports, the edge, the core; the library comes lean with
# the first client, so it is loaded here too)
IMPORT_MODULE = ("import ansible.module_utils.basic; "
                 "import ansible_collections.c5c3.orders.plugins.modules.keystoneuser_reconcile; "
                 "from ansible_collections.c5c3.orders.plugins.module_utils.k8s.client import library; library()")


def rss_of(code):
    """Peak RSS of a fresh interpreter running ``code`` (through rss.py, see there why)."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as figures:
        subprocess.run([sys.executable, str(Path(__file__).with_name("rss.py")), figures.name,
                        sys.executable, "-c", code], check=True)
        return int(figures.read().split()[0]) / 1024.0  # "<KiB> <wall> <cpu>", see rss.py


def main(kubeconfig):
    from ansible_collections.c5c3.orders.plugins.module_utils.k8s.client import KubeClient
    from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
    from ansible_collections.c5c3.orders.plugins.module_utils.k8s.runner import run_pass
    from ansible_collections.c5c3.orders.plugins.module_utils.k8s.service import KubeService
    from ansible_collections.c5c3.orders.plugins.module_utils.k8s.shared import share_strings
    from ansible_collections.c5c3.orders.plugins.module_utils.passes.keystoneuser import KeystoneUserSource
    from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection

    sys.path.insert(0, str(Path(__file__).parent))
    from floor import DISCOVERY, list_calls

    report = {"rss_bare_python_mib": rss_of("pass"),
              "rss_import_kubernetes_mib": rss_of("import kubernetes"),
              "rss_import_ansible_basic_mib": rss_of("import ansible.module_utils.basic"),
              "rss_import_ansible_basic_and_kubernetes_mib": rss_of("import ansible.module_utils.basic, kubernetes"),
              "rss_import_ansible_basic_and_kubernetes_lean_mib": rss_of(IMPORT_LEAN),
              "rss_import_module_mib": rss_of(IMPORT_MODULE),
              "lists": []}
    client = KubeClient({"kubeconfig": kubeconfig})
    calls = [("/apis/" + DISCOVERY, None)] + [
        (resource.collection(namespace), {"labelSelector": selector} if selector else None)
        for resource, namespace, selector, _items in list_calls(KubeService(client, "c5c3-orders"))]
    tracemalloc.start()
    for path, query in calls:  # each list whole, as one response, to see what it weighs
        raw = client.request_raw("GET", path, query=query)
        before = tracemalloc.get_traced_memory()[0]
        body = json.loads(raw)
        decoded = tracemalloc.get_traced_memory()[0] - before
        items = body.get("items") or []
        for item in items:
            (item.get("metadata") or {}).pop("managedFields", None)
        slim = tracemalloc.get_traced_memory()[0] - before
        share_strings(items, {})  # as a pass's lists are held (KubeService(share=True))
        shared = tracemalloc.get_traced_memory()[0] - before
        report["lists"].append({"path": path + ("?labelSelector=" + query["labelSelector"] if query else ""),
                                "items": len(items), "bytes_mib": len(raw) / MIB,
                                "decoded_mib": decoded / MIB, "without_managed_fields_mib": slim / MIB,
                                "strings_shared_mib": shared / MIB})
        del raw, body, items
    tracemalloc.stop()

    tracemalloc.start()
    started = time.monotonic()
    service = KubeService(client, "c5c3-orders", dry_run=True, share=True)  # as the module makes it
    redactor = Redactor()
    source = KeystoneUserSource(service, {}, Selection(), lambda: "x" * 43, redactor)
    result = run_pass(source, {"": service}, redactor)
    seconds = time.monotonic() - started
    del source
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
