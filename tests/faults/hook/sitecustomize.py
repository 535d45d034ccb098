"""Fault hooks for one reconcile pass process, loaded from outside: the harness puts this folder on PYTHONPATH.

Nothing in the collection knows about it. When ``C5C3_FAULTS_HOOK_DIR`` names a folder, the collection's
``KubeClient.request`` is wrapped as soon as ``plugins/module_utils/k8s/client.py`` is imported (an import
hook, so it works for the module run directly and for the AnsiballZ payload alike), and the harness steers it
through files in that folder:

- ``requests.jsonl``: one line per API request of every pass (pass id, cluster, method, path, write or
  read, and the outcome: ``ok``, an HTTP status or ``transport``), and one line per HTTP exchange that did not
  succeed (``http``: status or exception name), including those urllib3 retried on its own (a 429 or 503 with
  ``Retry-After`` is retried up to 3 times before the client sees it). Paths name objects; bodies are never
  logged.
- ``writes.count``: the number of writes so far, over every pass of a scenario (the write index).
- ``kill.json`` ``{"after_write": k}`` or ``{"after_match": regex}``: SIGKILL the process right after the k-th
  write (or the first write whose signature ``<cluster or mgmt> METHOD path`` matches; with ``"skip": n`` the
  (n+1)-th) has been answered, before anything else happens.
- ``pause.json`` ``{"before_match": regex}`` or ``{"before_write": k}``: before the first matching write (or
  write number k), create ``paused`` and wait for
  ``resume`` (the harness injects its fault in between), then send the write.
- gateway writes (``objectstorage_reconcile``): every admin-ops request other than a GET, and every IAM or S3
  call that changes something (``Create*``, ``Delete*``, ``Put*``, ``Update*``), is logged, counted and matched
  like a Kubernetes write, its signature ``gw <operation> <resource>`` (e.g. ``gw iam:CreateAccessKey``,
  ``gw admin DELETE /admin/user``): ``pause.json`` and ``kill.json`` act on it the same way, so a pass can be
  SIGKILLed right after the gateway answered CreateAccessKey and before the key's Secret is written.
- ``intrude.json`` ``{"remaining": n, "kubeconfig": path}``: before each of the next n writes that carry a
  resourceVersion precondition, another field manager (``c5c3-faults-intruder``) patches the same object first,
  so the pass's write meets a real 409 from the API server.
"""
import contextlib
import importlib.abc
import json
import os
import re
import signal
import sys
import threading
import time

HOOK_DIR = os.environ.get("C5C3_FAULTS_HOOK_DIR")
PASS_ID = os.environ.get("C5C3_FAULTS_PASS_ID", "")
TARGET = "ansible_collections.c5c3.orders.plugins.module_utils.k8s.client"
RGW_ADMIN = "ansible_collections.c5c3.orders.plugins.module_utils.rgw.admin"
RGW_BOTO = "ansible_collections.c5c3.orders.plugins.module_utils.rgw.boto"
GATEWAY_WRITE = re.compile(r"^(iam|s3):(Create|Delete|Put|Update|Attach|Detach)")
INTRUDER = "c5c3-faults-intruder"
_LOCK = threading.RLock()


def _path(name):
    return os.path.join(HOOK_DIR, name)


def _read_json(name):
    try:
        with open(_path(name)) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _write_json(name, data):
    tmp = _path(name + ".tmp")
    with open(tmp, "w") as fh:
        json.dump(data, fh)
    os.replace(tmp, _path(name))


def _log(entry):
    entry = dict(entry, pass_id=PASS_ID, t=round(time.time(), 3))
    with _LOCK, open(_path("requests.jsonl"), "a") as fh:
        fh.write(json.dumps(entry) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _next_write_index():
    with _LOCK:  # a pass writes for several orders from a small pool of threads
        return _bump_write_count()


def _bump_write_count():
    try:
        with open(_path("writes.count")) as fh:
            count = int(fh.read().strip() or 0)
    except (OSError, ValueError):
        count = 0
    count += 1
    with open(_path("writes.count"), "w") as fh:
        fh.write(str(count))
    return count


def _has_precondition(body):
    if isinstance(body, dict):
        return bool((body.get("metadata") or {}).get("resourceVersion"))
    if isinstance(body, list):
        return any(op.get("op") == "test" and op.get("path") == "/metadata/resourceVersion" for op in body
                   if isinstance(op, dict))
    return False


def _pause_if_asked(signature):
    with _LOCK:  # one pause per armed pattern, whichever of the pass's threads gets there first
        spec = _read_json("pause.json")
        if not spec or not _pause_matches(spec, signature):
            return
        os.unlink(_path("pause.json"))
        _write_json("paused", {"signature": signature, "pass_id": PASS_ID})
    deadline = time.monotonic() + float(spec.get("timeout", 300))
    while not os.path.exists(_path("resume")) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        os.unlink(_path("resume"))
    except OSError:
        pass


def _pause_matches(spec, signature):
    """``before_match``: the signature matches; ``before_write``: this write would be number k."""
    if spec.get("before_write"):
        try:
            with open(_path("writes.count")) as fh:
                done = int(fh.read().strip() or 0)
        except (OSError, ValueError):
            done = 0
        return done + 1 == spec["before_write"]
    return bool(re.search(spec["before_match"], signature))


def _intrude_if_asked(method, path, body):
    with _LOCK:
        spec = _read_json("intrude.json")
        if not spec or spec.get("remaining", 0) <= 0 or not _has_precondition(body):
            return
        spec["remaining"] -= 1
        _write_json("intrude.json", spec)
    from kubernetes import config as k8s_config  # pylint: disable=import-outside-toplevel
    api = k8s_config.new_client_from_config(config_file=spec["kubeconfig"])
    target = path[:-len("/status")] if path.endswith("/status") else path
    outcome = "ok"
    try:
        api.call_api(target, "PATCH", query_params=[("fieldManager", INTRUDER)],
                     header_params={"Content-Type": "application/merge-patch+json", "Accept": "application/json"},
                     body={"metadata": {"annotations": {"faults.c5c3.io/intruder": str(time.time())}}},
                     auth_settings=["BearerToken"], _preload_content=False, _request_timeout=10)
    except Exception as exc:  # pylint: disable=broad-except
        outcome = str(getattr(exc, "status", None) or "transport")
    finally:
        api.close()
    _log({"intruder": True, "method": "PATCH", "path": target, "outcome": outcome, "before": method})


def _wrap(client_module):
    original = client_module.KubeClient.request

    def request(self, method, path, *args, **kwargs):
        write = method != "GET"
        signature = "%s %s %s" % (getattr(self, "name", "") or "mgmt", method, path)
        if write:
            _pause_if_asked(signature)
            _intrude_if_asked(method, path, kwargs.get("body"))
        outcome = "ok"
        try:
            return original(self, method, path, *args, **kwargs)
        except Exception as exc:
            status = getattr(exc, "status", None)
            outcome = str(status) if status else "transport"
            raise
        finally:
            entry = {"cluster": getattr(self, "name", ""), "method": method, "path": path, "write": write,
                     "outcome": outcome}
            if write:
                body = kwargs.get("body")
                if method == "POST" and isinstance(body, dict):  # a create names its object in the body
                    entry["name"] = (body.get("metadata") or {}).get("name") or ""
            _after(entry, signature)

    client_module.KubeClient.request = request


def _after(entry, signature):
    """Log a request that was answered (or failed); after a write, SIGKILL the process when kill.json says so."""
    write = entry["write"]
    if write:
        entry["n"] = _next_write_index()
    _log(entry)
    if not write:
        return
    kill = _read_json("kill.json") or {}
    if kill.get("after_match") and re.search(kill["after_match"], signature) and kill.get("skip"):
        kill["skip"] -= 1  # {"after_match": regex, "skip": n}: the (n+1)-th matching write
        _write_json("kill.json", kill)
        return
    if kill.get("after_write") == entry["n"] or (
            kill.get("after_match") and re.search(kill["after_match"], signature)):
        if kill.get("after_match"):  # one kill per armed pattern
            try:
                os.unlink(_path("kill.json"))
            except OSError:
                pass
        _log({"killed": True, "after": entry["n"], "method": entry["method"], "path": entry["path"],
              "name": entry.get("name", ""), "cluster": entry["cluster"]})
        os.kill(os.getpid(), signal.SIGKILL)


def _gateway_entry(method, path, write, outcome):
    return {"cluster": "gw", "method": method, "path": path, "write": write, "outcome": outcome}


def _wrap_admin(admin_module):
    """Admin ops: every request other than a GET is a gateway write (``gw admin <METHOD> /admin/<resource>``)."""
    original = admin_module.RgwAdminClient.request

    def request(self, method, resource, *args, **kwargs):
        path = "/%s/%s" % (self.admin_path.strip("/"), resource)
        write = method != "GET"
        signature = "gw admin %s %s" % (method, path)
        if write:
            _pause_if_asked(signature)
        outcome = "ok"
        try:
            return original(self, method, resource, *args, **kwargs)
        except Exception as exc:
            outcome = str(getattr(exc, "status", None) or "transport")
            raise
        finally:
            _after(_gateway_entry("admin " + method, path, write, outcome), signature)

    admin_module.RgwAdminClient.request = request


def _wrap_boto(boto_module):
    """IAM and S3: ``calling(operation)`` brackets every call; a changing operation is a gateway write
    (``gw iam:CreateAccessKey``). The write is paused before and may be killed after the gateway answered."""
    original = boto_module.BotoEdge.calling

    @contextlib.contextmanager
    def calling(self, operation):
        write = bool(GATEWAY_WRITE.match(operation))
        signature = "gw %s" % operation
        if write:
            _pause_if_asked(signature)
        outcome = "ok"
        try:
            with original(self, operation):
                yield
        except Exception as exc:
            outcome = str(getattr(exc, "status", None) or getattr(exc, "code", None) or "transport")
            raise
        finally:
            _after(_gateway_entry(operation.split(":")[0], operation, write, outcome), signature)

    boto_module.BotoEdge.calling = calling


WRAPS = {TARGET: _wrap, RGW_ADMIN: _wrap_admin, RGW_BOTO: _wrap_boto}


def _watch_http():
    """Log every HTTP exchange of the process that is not a success, retried ones included."""
    try:
        from urllib3 import connectionpool  # pylint: disable=import-outside-toplevel
    except ImportError:
        return
    original = connectionpool.HTTPConnectionPool._make_request  # pylint: disable=protected-access

    def _make_request(self, conn, method, url, *args, **kwargs):
        try:
            response = original(self, conn, method, url, *args, **kwargs)
        except Exception as exc:
            _log({"http": type(exc).__name__, "method": method, "path": url.split("?")[0]})
            raise
        if response.status >= 400:
            entry = {"http": str(response.status), "method": method, "path": url.split("?")[0]}
            if response.headers.get("Retry-After"):  # urllib3 sleeps this long before it retries a 429/503
                entry["retry_after"] = response.headers["Retry-After"]
            _log(entry)
        return response

    connectionpool.HTTPConnectionPool._make_request = _make_request  # pylint: disable=protected-access


class _WrappingLoader(importlib.abc.Loader):
    """The real loader of the client module, plus the wrap right after the module has executed."""

    def __init__(self, inner, wrap):
        self.inner = inner
        self.wrap = wrap

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        self.wrap(module)


class _Finder(importlib.abc.MetaPathFinder):
    """Lets the real finders (path or zip import) locate a wrapped module and hands back a wrapping loader."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in WRAPS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _WrappingLoader(spec.loader, WRAPS[fullname])
                return spec
        return None


if HOOK_DIR:
    _watch_http()
    for _name, _wrapper in WRAPS.items():
        if _name in sys.modules:
            _wrapper(sys.modules[_name])
    sys.meta_path.insert(0, _Finder())
