"""A small raw-JSON Kubernetes client for the harness and the observer.

Deliberately not the collection's own client: the observer must not share code with what it judges.
"""
import json
from typing import Any, Dict, List, Optional

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException

CONTENT = {"merge": "application/merge-patch+json", "json": "application/json-patch+json",
           "apply": "application/apply-patch+yaml", None: "application/json"}

KEYSTONEUSERS = "/apis/c5c3.io/v1alpha1"
KORC = "/apis/openstack.k-orc.cloud/v1alpha1"
ESO = "/apis/external-secrets.io/v1alpha1"
CORE = "/api/v1"
FLOWCONTROL = "/apis/flowcontrol.apiserver.k8s.io/v1"


class Unreachable(Exception):
    """The API server did not answer usefully (transport error, 5xx, 429): the observer is blind for now."""

    def __init__(self, what: str, status: Optional[int]):
        super().__init__(f"{what}: {status or 'transport'}")
        self.status = status


class Refused(Exception):
    """The API server answered with a client error other than 404."""

    def __init__(self, what: str, status: int, reason: str):
        super().__init__(f"{what}: {status} {reason}")
        self.status = status
        self.reason = reason


class Kube:
    def __init__(self, kubeconfig: str, timeout: float = 5.0):
        cfg = k8s_client.Configuration()
        k8s_config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
        cfg.retries = False
        self.api = k8s_client.ApiClient(cfg)
        self.timeout = timeout
        self.last_headers: Dict[str, str] = {}

    def request(self, method: str, path: str, body: Any = None, query: Optional[Dict[str, str]] = None,
                patch: Optional[str] = None, timeout: Optional[float] = None) -> Optional[dict]:
        """The decoded body; None for 404; Unreachable / Refused otherwise."""
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = CONTENT[patch]
        try:
            resp = self.api.call_api(path, method, query_params=list((query or {}).items()), header_params=headers,
                                     body=body, auth_settings=["BearerToken"], _preload_content=False,
                                     _return_http_data_only=False, _request_timeout=timeout or self.timeout)
        except ApiException as exc:
            if exc.status == 404:
                return None
            if not exc.status or exc.status >= 500 or exc.status == 429:
                raise Unreachable(f"{method} {path}", exc.status) from None
            reason = exc.reason
            try:
                reason = json.loads(exc.body).get("message") or reason
            except (TypeError, ValueError, AttributeError):
                pass
            raise Refused(f"{method} {path}", exc.status, reason) from None
        except Exception as exc:  # urllib3 transport errors, timeouts
            raise Unreachable(f"{method} {path}", None) from exc
        data, _status, headers = resp
        self.last_headers = {k.lower(): v for k, v in (headers or {}).items()}
        raw = data.data
        return json.loads(raw) if raw else {}

    def get(self, path: str, **kw) -> Optional[dict]:
        return self.request("GET", path, **kw)

    def items(self, path: str, selector: Optional[str] = None) -> List[dict]:
        query = {"labelSelector": selector} if selector else None
        return (self.request("GET", path, query=query) or {}).get("items") or []

    def create(self, path: str, body: dict) -> Optional[dict]:
        return self.request("POST", path, body=body)

    def merge(self, path: str, body: dict) -> Optional[dict]:
        return self.request("PATCH", path, body=body, patch="merge")

    def apply(self, path: str, body: dict, manager: str = "c5c3-faults") -> Optional[dict]:
        return self.request("PATCH", path, body=body, patch="apply", query={"fieldManager": manager, "force": "true"})

    def delete(self, path: str) -> Optional[dict]:
        return self.request("DELETE", path)

    def close(self) -> None:
        self.api.close()


def ns_path(group: str, namespace: str, plural: str, name: str = "") -> str:
    path = f"{group}/namespaces/{namespace}/{plural}"
    return f"{path}/{name}" if name else path
