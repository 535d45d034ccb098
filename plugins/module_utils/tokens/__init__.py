# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Short-lived target-cluster tokens (docs/install.md, "Short-lived target tokens"): what a token says of itself,
when it is renewed, and how a kubeconfig carries it. Pure; the module target_tokens does the I/O."""
