"""Keystone and OpenBao as the observer asks them: does this password authenticate, does this user exist, what
does the backup hold. Plain HTTP, short timeouts; an unreachable server raises ``Blind``, never a verdict."""
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import List, Optional

import yaml

ADMIN_DOMAIN = "Default"


class Blind(Exception):
    """The server that would decide the question did not answer."""


def _call(method: str, url: str, body: Optional[dict] = None, headers: Optional[dict] = None,
          timeout: float = 5.0):
    req = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers=dict({"Content-Type": "application/json"}, **(headers or {})))
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()
    except (urllib.error.URLError, OSError) as err:
        raise Blind(f"{method} {url.split('?')[0]}: {type(err).__name__}") from None


class Keystone:
    def __init__(self, clouds_file: str, cloud: str = "c5c3-admin"):
        entry = yaml.safe_load(open(clouds_file))["clouds"][cloud]
        self.auth_url = entry["auth"]["auth_url"].rstrip("/")
        self._admin = entry["auth"]
        self._token = None
        self._token_at = 0.0
        self._lock = threading.Lock()

    def _password_body(self, user: str, password: str, domain: str = ADMIN_DOMAIN, system: bool = False) -> dict:
        body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": user, "domain": {"name": domain}, "password": password}}}}}
        if system:
            body["auth"]["scope"] = {"system": {"all": True}}
        return body

    def authenticates(self, user: str, password: str) -> bool:
        """True on 201, False on 401; anything else (down, 5xx) is Blind."""
        status, _, _ = _call("POST", self.auth_url + "/auth/tokens", self._password_body(user, password))
        if status == 201:
            return True
        if status == 401:
            return False
        raise Blind(f"keystone auth answered {status}")

    def _admin_token(self) -> str:
        with self._lock:
            if self._token is None or time.monotonic() - self._token_at > 600:
                status, headers, _ = _call("POST", self.auth_url + "/auth/tokens", self._password_body(
                    self._admin["username"], self._admin["password"], self._admin.get("user_domain_name", "Default"),
                    system=True))
                if status != 201:
                    raise Blind(f"keystone admin token: {status}")
                self._token, self._token_at = headers["X-Subject-Token"], time.monotonic()
            return self._token

    def user_exists(self, name: str) -> bool:
        query = urllib.parse.urlencode({"name": name, "domain_id": "default"})
        for _ in range(2):
            status, _, raw = _call("GET", f"{self.auth_url}/users?{query}", headers={"X-Auth-Token": self._admin_token()})
            if status == 200:
                return bool(json.loads(raw).get("users"))
            if status == 401:  # the token outlived a restart of Keystone's keys: get a new one
                with self._lock:
                    self._token = None
                continue
            raise Blind(f"keystone user lookup answered {status}")
        raise Blind("keystone user lookup: admin token refused")


class OpenBao:
    def __init__(self, addr: str, token: str, mount: str = "kv-v2"):
        self.addr, self.token, self.mount = addr.rstrip("/"), token, mount

    def read(self, path: str) -> Optional[dict]:
        """The current version's data at ``path``, or None when there is none (deleted or never written)."""
        status, _, raw = _call("GET", f"{self.addr}/v1/{self.mount}/data/{path}", headers={"X-Vault-Token": self.token})
        if status == 200:
            return (json.loads(raw).get("data") or {}).get("data")
        if status == 404:
            return None
        raise Blind(f"openbao read answered {status}")

    def exists(self, path: str) -> bool:
        """Whether any metadata is left at ``path`` (a soft-deleted version still counts)."""
        status, _, _ = _call("GET", f"{self.addr}/v1/{self.mount}/metadata/{path}", headers={"X-Vault-Token": self.token})
        if status == 200:
            return True
        if status == 404:
            return False
        raise Blind(f"openbao metadata answered {status}")

    def versions(self, path: str) -> List[dict]:
        """The data of every version at ``path`` that is neither deleted nor destroyed (empty when none)."""
        headers = {"X-Vault-Token": self.token}
        status, _, raw = _call("GET", f"{self.addr}/v1/{self.mount}/metadata/{path}", headers=headers)
        if status == 404:
            return []
        if status != 200:
            raise Blind(f"openbao metadata answered {status}")
        found = []
        for number, meta in ((json.loads(raw).get("data") or {}).get("versions") or {}).items():
            if meta.get("destroyed") or meta.get("deletion_time"):
                continue
            status, _, raw = _call("GET", f"{self.addr}/v1/{self.mount}/data/{path}?version={int(number)}",
                                   headers=headers)
            if status == 200:
                found.append((json.loads(raw).get("data") or {}).get("data") or {})
            elif status != 404:
                raise Blind(f"openbao read answered {status}")
        return found
