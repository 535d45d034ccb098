# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The install's objects as a kustomize base, file by file (pure).

The GitOps render of the role c5c3.orders.install (roles/install/tasks/render.yml; docs/install.md, "GitOps -
rendered manifests") writes what the apply would apply: one file per object, ``<NN>-<kind>-<name>.yaml`` with NN its
place in the apply order, and ``kustomization.yaml`` listing them. The YAML is written for review in a GitOps
repository - keys in the templates' order, multi-line strings (the controller's kubeconfig, admission expressions)
as literal blocks, no folded lines - so a change of settings shows as a readable diff. Unit-tested in
tests/unit/install/.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import yaml

KUSTOMIZATION = "kustomization.yaml"
HEADER = "# Rendered by c5c3.orders.install (c5c3_install_render_dir): render again rather than edit.\n"
UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


class _Dumper(yaml.SafeDumper):
    """Block sequences indented under their key, as the repository's own manifests (roles/install/files/crds/) are."""

    def increase_indent(self, flow=False, indentless=False):
        return super(_Dumper, self).increase_indent(flow, False)


def _str(dumper, value):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def plain(value):
    """``value`` as plain dicts, lists, strings and numbers (Ansible hands filters tagged subclasses, which a safe
    dumper does not know)."""
    if isinstance(value, dict):
        return dict((str(k), plain(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


def to_yaml(obj):
    """One document, readable: template key order, literal blocks for multi-line strings, no folding."""
    return yaml.dump(plain(obj), Dumper=_Dumper, default_flow_style=False, sort_keys=False, width=4096,
                     allow_unicode=True)


def file_name(index, obj, width=2):
    meta = obj.get("metadata") or {}
    return "%0*d-%s-%s.yaml" % (width, index, UNSAFE.sub("_", str(obj.get("kind", "")).lower()),
                                UNSAFE.sub("_", str(meta.get("name", ""))))


def kustomize_base(objects):
    """``[{file, content}]``: one file per object in ``objects`` (the apply order), then ``kustomization.yaml``
    listing them in that order."""
    objects = list(objects or [])
    width = max(2, len(str(len(objects))))
    files = [{"file": file_name(i, obj, width), "content": HEADER + to_yaml(obj)} for i, obj in enumerate(objects)]
    names = [f["file"] for f in files]
    kustomization = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": names}
    return files + [{"file": KUSTOMIZATION, "content": HEADER + to_yaml(kustomization)}]


class FilterModule(object):
    def filters(self):
        return {"install_kustomize_base": kustomize_base}
