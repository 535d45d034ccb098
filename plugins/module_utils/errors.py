# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The one root of every exception the collection's code raises, and the tree under it.

Each layer has one root of its own, so a caller catches a whole layer by one name and an error of ours is never
mistaken for a library's (``except C5C3Error`` catches every one of them; nothing here catches it yet)::

    C5C3Error                                  this module
    +-- CoreError                              orders/errors.py: the pure core (orders/, keystoneuser/, objectstorage/)
    |   +-- OrderSpecError (also ValueError)   orders/identity.py: an order that cannot be read
    |   +-- DurationError (also ValueError)    orders/durations.py: text that is not a Go duration
    +-- KubernetesError                        k8s/errors.py: the Kubernetes edge (k8s/)
    |   +-- KubeError                          one failed API request (the controller's ``kube.ApiError`` too)
    |   +-- ConnectionConfigError              connection options that describe no usable cluster
    |   +-- ModuleFailure                      k8s/module.py: what a module reports with ``fail_json``
    |   +-- OtherActionError                   k8s/executor.py: an action of another executor failed
    +-- RgwError                               rgw/errors.py: the RGW edge (rgw/); its one error is its root
    +-- AuditError                             audit/errors.py: the credentials audit (audit/)
        +-- Unreachable                        audit/http.py
        +-- BackupUnreadable                   audit/openbao.py
        +-- ReadFailed                         audit/context.py
        +-- CloudsYamlError (also ValueError)  audit/cloudsyaml.py

A class that derived from a built-in error (``ValueError``) keeps it as a second base, so every ``except`` that
caught it still does. This module imports nothing: the pure core and every edge may import it.
"""
from __future__ import annotations


class C5C3Error(Exception):
    """Root of every exception the collection's code raises (see the tree above)."""
