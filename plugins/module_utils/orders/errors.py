# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The root of the pure core's exceptions (``orders/``, ``keystoneuser/``, ``objectstorage/``).

The core raises little: a reader that cannot read an order or a value raises a subclass of ``CoreError``, and the
kind's core turns it into a condition. The whole tree is in ``module_utils/errors.py``.
"""
from __future__ import annotations

from ansible_collections.c5c3.orders.plugins.module_utils.errors import C5C3Error


class CoreError(C5C3Error):
    """Root of the pure core's exceptions."""
