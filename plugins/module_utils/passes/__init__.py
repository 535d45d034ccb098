# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The I/O edge of each pass: what it reads, the snapshots it builds, and the sources ``k8s/runner.py`` drives.

The cores (``keystoneuser/``, ``objectstorage/``) decide; the runner carries decisions out with
``k8s/executor.py``; here is what a pass reads for them, by the access contract (docs/install.md).

| Rule                                                                              | File |
|-----------------------------------------------------------------------------------|------|
| Discovery, ControlPlanes, a target read only in its assigned namespaces           | reader.py |
| Orders per cluster and namespace; the delivered Secrets beside them               | reader.py |
| Unreadable clusters and namespaces reported, with the orders their children name  | reader.py |
| KeystoneUser: children, SecretStores, owners of a user name; the snapshot         | keystoneuser.py |
| Object storage in dependency order, each kind seeing what the pass settled        | objectstorage.py |
| The short path: missing accounts by the core's rule, one ``Create`` each          | accounts.py |
| Gateway clients, reads and actions; an issued key persisted at once               | gateways.py |
| Which orders a pass reconciles (namespaces, orders, shares)                       | selection.py, sharding.py |
| A targeted pass answered from the controller's watch cache                        | snapshot.py |
| The per-order entry every path reports (``OrderResult``)                          | orders/outcome.py |
"""
