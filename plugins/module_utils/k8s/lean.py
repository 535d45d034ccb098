# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The ``kubernetes`` client library without its generated API and model classes.

The edge uses the library for what users rely on -- the kubeconfig and in-cluster loaders (contexts, client
certificates, inline data, tokens, exec plugins and auth providers), the ``Configuration`` they fill, and the REST
client's TLS connection pool -- and sends raw requests it decodes with ``json``. But ``import kubernetes`` runs the
package's ``__init__``, which imports every generated API class and all ~700 model classes: measured, that is about
50 MiB of resident memory and most of the import time of every module process, for classes a pass never touches.

So, when the process has not imported the library yet, the packages ``kubernetes``, ``kubernetes.client`` and
``kubernetes.client.models`` are registered as plain packages over the library's own folders, without running their
``__init__``; then the library's own modules are imported from its own files: ``client.configuration``,
``client.exceptions``, ``client.rest``, ``client.api_client`` and the whole ``config`` package. Every connection
option therefore goes through the very code kubernetes.core's users run. ``kubernetes.client`` offers the names the
loaders import from it (``Configuration``, ``ApiClient``) and ``ApiException``; ``kubernetes.client.models`` is
empty, which the ApiClient reads only to turn a response into model objects, something the edge never asks for. A
process that imported the library whole before keeps it whole and gets it back unchanged.
"""
from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import types
from typing import Any, NamedTuple


class Library(NamedTuple):
    client: Any          # kubernetes.client: Configuration, ApiClient, ApiException
    config: Any          # kubernetes.config: the loaders
    ApiException: Any


def _package(name: str, path: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = [path]
    module.__package__ = name
    module.__file__ = None
    sys.modules[name] = module
    return module


def _version(root: str) -> str:
    """The ``__version__`` the package's ``__init__`` would set, read from it without running it."""
    try:
        with open(f"{root}/__init__.py", encoding="utf-8") as fh:
            found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", fh.read(), re.M)
    except OSError:
        return ""
    return found.group(1) if found else ""


def _whole() -> Library:
    from kubernetes import client, config  # pylint: disable=import-outside-toplevel
    from kubernetes.client.rest import ApiException  # pylint: disable=import-outside-toplevel
    return Library(client, config, ApiException)


def load() -> Library:
    """The library's client and config modules, imported lean unless the process holds the whole library already
    (or the lean import fails: then whole); raises ImportError when it is not installed."""
    if "kubernetes" in sys.modules:
        return _whole()
    spec = importlib.util.find_spec("kubernetes")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("No module named 'kubernetes'")
    root = list(spec.submodule_search_locations)[0]
    created = [_package("kubernetes", root), _package("kubernetes.client", f"{root}/client"),
               _package("kubernetes.client.models", f"{root}/client/models")]
    try:
        package: Any = created[0]  # plain packages made above: the attributes the library's __init__ would set
        client: Any = created[1]
        package.__version__ = client.__version__ = _version(root)
        package.client = client
        client.models = created[2]
        configuration = importlib.import_module("kubernetes.client.configuration")
        exceptions = importlib.import_module("kubernetes.client.exceptions")
        client.Configuration = configuration.Configuration
        client.ApiException = exceptions.ApiException
        client.exceptions = exceptions
        client.rest = importlib.import_module("kubernetes.client.rest")
        client.ApiClient = importlib.import_module("kubernetes.client.api_client").ApiClient
        package.config = importlib.import_module("kubernetes.config")
    except Exception:  # pylint: disable=broad-except
        # a library laid out otherwise: leave no half-made package behind and import it whole, as before
        for name in [n for n in sys.modules if n == "kubernetes" or n.startswith("kubernetes.")]:
            del sys.modules[name]
        return _whole()
    return Library(client, package.config, exceptions.ApiException)
