# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What a failed action means for a KeystoneUser's conditions.

docs/keystoneuser-crd.md, the ServiceAccountError, DeliveryError, DeliveryRefused and TransportErrorRetryFailed
rows of "Conditions"; docs/reconciler.md "Provisioning and the collision probe" (a failed clear of a latched
transport error). The rules every kind shares live in ``orders.failures``; KeystoneUser's own reading:

- the order and user legs land on UserReady (ServiceAccountError), the backup and delivered legs on
  DeliveryReady (DeliveryError), with the error text, back in 30 s;
- a Create of the delivered Secret answered 409 -> DeliveryReady False/DeliveryRefused (a foreign Secret of that
  name the label list could not see), back in 10 minutes;
- clearing a latched K-ORC transport error that fails, whatever the status code -> UserReady
  False/TransportErrorRetryFailed with the error text (its row in docs/keystoneuser-crd.md "Conditions":
  clearing a latched transport error failed). Only the wait depends on the code: a NotFound/Conflict (the User
  went or changed under the pass) or a transient failure (429, a timeout, a 5xx) comes back as soon as the pass
  would have anyway, at most in the K-ORC progress interval; anything else in 30 s.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.conditions import DELIVERY_READY, USER_READY
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reasons import (
    DELIVERY_ERROR,
    DELIVERY_REFUSED,
    SERVICE_ACCOUNT_ERROR,
    TRANSPORT_ERROR_RETRY_FAILED,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders import failures, requeue
from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import Verdict
from ansible_collections.c5c3.orders.plugins.module_utils.orders.failures import FailurePolicy, Rewrite, target_of
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import (
    LEG_BACKUP,
    LEG_DELIVERED,
    LEG_ORDER,
    LEG_USER,
    Action,
    ActionError,
    ClearProgressing,
    Create,
    Decision,
)

SKIP_STATUSES = (404, 409)


def _clear_progressing(decision: Decision, action: Action, error: ActionError, detail: str,
                       _fields: Any) -> Optional[Rewrite]:
    """Every failed clear is reported; a short-lived cause only shortens the wait."""
    verdict = Verdict(False, TRANSPORT_ERROR_RETRY_FAILED,
                      f"clearing the latched transport error on {target_of(action)} failed: {detail}")
    if error.status in SKIP_STATUSES or failures.is_transient(error):
        wait = requeue.earliest([decision.requeue_after, requeue.PROGRESS_KORC])
    else:
        wait = requeue.ERROR_RETRY
    return Rewrite(USER_READY, verdict, wait)


def _create(_decision: Decision, action: Action, error: ActionError, _detail: str, fields: Any) -> Optional[Rewrite]:
    if action.leg != LEG_DELIVERED or error.status != 409:
        return None
    return Rewrite(DELIVERY_READY, Verdict(False, DELIVERY_REFUSED,
                                           f"{target_of(action)} exists and is not owned by this order; it is left "
                                           "unchanged"),
                   requeue.REFUSAL, fields=replace(fields, delivered=False))


POLICY = FailurePolicy(
    leg_conditions={LEG_ORDER: USER_READY, LEG_USER: USER_READY, LEG_BACKUP: DELIVERY_READY,
                    LEG_DELIVERED: DELIVERY_READY},
    error_reasons={USER_READY: SERVICE_ACCOUNT_ERROR, DELIVERY_READY: DELIVERY_ERROR},
    special={ClearProgressing: _clear_progressing, Create: _create},
)


def on_action_failure(decision: Decision, action: Action, error: ActionError) -> Decision:
    return failures.on_action_failure(decision, action, error, POLICY)
