"""Kubeconfigs for places that do not have the stack's files: the image's root, a Pod on the node."""
import base64
from pathlib import Path

import yaml


def flat_kubeconfig(path: Path) -> str:
    """The stack's kubeconfig with its certificate files inlined, for a root that does not have them."""
    config = yaml.safe_load(path.read_text())
    for section, fields in (("clusters", ("certificate-authority",)), ("users", ("client-certificate",
                                                                                 "client-key"))):
        for entry in config.get(section, []):
            body = entry.get(section[:-1], {})
            for field in fields:
                if field in body:
                    file = (path.parent / body.pop(field)).resolve()
                    body[field + "-data"] = base64.b64encode(file.read_bytes()).decode()
    return yaml.safe_dump(config)
