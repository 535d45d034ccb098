# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The root of the credentials audit's exceptions (``audit/``); the whole tree is in ``module_utils/errors.py``."""
from __future__ import annotations

from ansible_collections.c5c3.orders.plugins.module_utils.errors import C5C3Error


class AuditError(C5C3Error):
    """Root of the audit's exceptions: a service or an object the audit needs could not be read."""
