"""The edge imports the ``kubernetes`` library without its generated classes, and connects the same (docs/benchmarks.md,
"The `kubernetes` client: what it costs, and how it stays").

Each case runs in two fresh interpreters: one imports the library whole (``import kubernetes``), the other goes
through ``k8s.lean`` as the modules do; both load the same kubeconfig with the collection's ``build_configuration``
and print every connection setting the ``Configuration`` holds (host, TLS files by content, verification, tokens,
proxy). They must be identical. The lean interpreter must not have imported the model classes, and a request sent
through the lean ApiClient must come back as it does through the whole one (a local HTTP server answers it).
"""
from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

COLLECTIONS = Path(__file__).resolve().parents[3] / ".collections"

PROBE = r"""
import json, sys
mode, cases, server = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
if mode == "whole":
    import kubernetes  # noqa: F401
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.client import KubeClient, build_configuration
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import ConnectionConfigError

def content(path):
    if not path:
        return path
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8", "replace")

def settings(auth):
    try:
        cfg = build_configuration(auth)
    except ConnectionConfigError as exc:
        return {"error": type(exc).__name__}
    return {
        "host": cfg.host, "verify_ssl": cfg.verify_ssl, "ssl_ca_cert": content(cfg.ssl_ca_cert),
        "cert_file": content(cfg.cert_file), "key_file": content(cfg.key_file), "api_key": cfg.api_key,
        "api_key_prefix": cfg.api_key_prefix, "username": cfg.username, "password": cfg.password, "proxy": cfg.proxy,
        "no_proxy": cfg.no_proxy, "tls_server_name": getattr(cfg, "tls_server_name", None),
        "assert_hostname": cfg.assert_hostname, "auth": sorted(cfg.auth_settings()),
    }

out = {"settings": [settings(auth) for auth in cases]}
client = KubeClient(dict(cases[0], host=server))
out["answer"] = client.request("GET", "/api/v1/namespaces/x/secrets", query={"labelSelector": "a"})
out["requests"] = client.requests
out["models"] = len([n for n in sys.modules if n.startswith("kubernetes.client.models.")])
print(json.dumps(out, sort_keys=True))
"""


def probe(mode, cases, server):
    argv = [sys.executable, "-c", PROBE, mode, json.dumps(cases), server]
    done = subprocess.run(argv, capture_output=True, text=True, env={"PYTHONPATH": str(COLLECTIONS)},
                          check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def kubeconfig(user):
    return {"apiVersion": "v1", "kind": "Config", "current-context": "b",
            "clusters": [{"name": "a", "cluster": {"server": "https://a.example:6443"}},
                         {"name": "b", "cluster": {"server": "https://b.example:6443",
                                                   "certificate-authority-data": b64("CA PEM"),
                                                   "tls-server-name": "api.b.example"}}],
            "users": [{"name": "u", "user": user}],
            "contexts": [{"name": "a", "context": {"cluster": "a", "user": "u"}},
                         {"name": "b", "context": {"cluster": "b", "user": "u"}}]}


def b64(text):
    return base64.b64encode(text.encode()).decode()


CASES = {
    "client certificate data, current context": {"kubeconfig": kubeconfig(
        {"client-certificate-data": b64("CERT PEM"), "client-key-data": b64("KEY PEM")})},
    "token, other context, proxy": {"kubeconfig": kubeconfig({"token": "t0ken-value"}), "context": "a",
                                    "proxy": "http://proxy.example:3128", "no_proxy": "b.example"},
    "options over the kubeconfig": {"kubeconfig": kubeconfig({"token": "t0ken-value"}), "host": "https://c:1",
                                    "api_key": "other", "validate_certs": False, "username": "me",
                                    "password": "pw"},
}


class _Answer(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the stdlib's name)
        body = json.dumps({"items": [{"metadata": {"name": "s"}}], "path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_the_lean_import_connects_exactly_as_the_whole_library(tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(kubeconfig({"token": "t0ken-value"})))
    cases = list(CASES.values()) + [{"kubeconfig": str(path)}, {"kubeconfig": str(tmp_path / "absent")}]
    server = HTTPServer(("127.0.0.1", 0), _Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        lean, whole = probe("lean", cases, url), probe("whole", cases, url)
    finally:
        server.shutdown()
    assert lean["settings"] == whole["settings"]
    assert lean["settings"][-1] == {"error": "ConnectionConfigError"} and "error" not in lean["settings"][0]
    assert lean["answer"] == whole["answer"] and lean["requests"] == 1
    assert lean["answer"]["path"] == "/api/v1/namespaces/x/secrets?labelSelector=a"
    assert whole["models"] > 100 and lean["models"] == 0, "the lean import loads no model class"
