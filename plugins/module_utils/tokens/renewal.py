# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""When a target-cluster token is renewed: the kubelet's rule for projected tokens (renew once 80% of the
lifetime has passed), plus what a migration from year-long tokens needs: a token that lives longer than the
platform allows, or never expires, is replaced at the next run."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Optional

from ansible_collections.c5c3.orders.plugins.module_utils.tokens.claims import TokenClaims

MIN_SECONDS = 600  # the API server refuses a TokenRequest of less than 10 minutes


@dataclass(frozen=True)
class RenewalPolicy:
    """``seconds``: the lifetime asked for; ``renew_after``: the share of a token's lifetime after which it is
    renewed (0.8: a 24 h token is renewed after 19.2 h, so a run every few minutes has hours to succeed)."""

    seconds: int = 86400
    renew_after: float = 0.8

    def problems(self) -> Optional[str]:
        if self.seconds < MIN_SECONDS:
            return f"duration must be at least {MIN_SECONDS} seconds (the API server's minimum), not {self.seconds}"
        if not 0 < self.renew_after < 1:
            return f"renew_after must lie between 0 and 1, not {self.renew_after}"
        return None


@dataclass(frozen=True)
class Verdict:
    renew: bool
    reason: str
    renew_at: Optional[datetime] = None


# A token may come back up to this much longer than asked (the API server rounds and may extend it): not a reason
# to renew it at once.
SLACK = timedelta(minutes=5)


def decide(claims: TokenClaims, now: datetime, policy: RenewalPolicy) -> Verdict:
    """Renew ``claims``' token now, or keep it (and when to come back)?"""
    if claims.expires_at is None:
        return Verdict(True, "the token never expires")
    if claims.expires_at <= now:
        return Verdict(True, "the token has expired")
    if claims.issued_at is None:
        return Verdict(True, "the token does not say when it was issued")
    lifetime = claims.expires_at - claims.issued_at
    if lifetime > timedelta(seconds=policy.seconds) + SLACK:
        return Verdict(True, f"the token lives {int(lifetime.total_seconds())} s, longer than the "
                             f"{policy.seconds} s allowed")
    renew_at = claims.issued_at + lifetime * policy.renew_after
    if now >= renew_at:
        return Verdict(True, f"{int(policy.renew_after * 100)}% of the token's lifetime has passed", renew_at)
    return Verdict(False, "valid", renew_at)
