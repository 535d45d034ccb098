# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""How many requests one client has in flight, and how it backs off when the API server says 429.

A pass writes for many orders at once (``k8s.runner``), so the client must not overrun the API server's priority
and fairness: it keeps at most ``limit`` requests in flight, and on a 429 (the server's "too many requests", with
``Retry-After``) every worker of the client pauses until the time the server named, the window of requests in
flight halves, and the refused request is sent again (a 429 is answered before the request is carried out, so
resending any verb is safe). The window grows back by one request after a window's worth of answers without a
429 (additive increase, multiplicative decrease, as TCP does), so a busy server sees the load fall at once and
rise slowly, never a storm of retries. The clock and the sleep are injectable, so tests need no real waiting.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Optional, TypeVar

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError

T = TypeVar("T")

DEFAULT_LIMIT = 8        # requests in flight per client (the pass's worker pool is as large)
DEFAULT_RETRIES = 8      # 429s in a row for one request before it is reported as failed
MAX_WAIT = 30.0          # the longest pause one 429 can impose (seconds), whatever Retry-After says
FIRST_BACKOFF = 0.25     # the pause after a 429 without Retry-After, doubled for each further one in a row


class Throttle:
    def __init__(self, limit: int = DEFAULT_LIMIT, retries: int = DEFAULT_RETRIES, max_wait: float = MAX_WAIT,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.limit = max(1, int(limit))
        self.window = self.limit      # the current bound, between 1 and ``limit``
        self.retries = retries
        self.max_wait = max_wait
        self.in_flight = 0
        self.peak = 0                 # the most requests ever in flight at once
        self.throttled = 0            # 429 answers received
        self._clock = clock
        self._sleep = sleep
        self._resume_at = 0.0         # no request starts before this time (clock)
        self._calm = 0                # answers without 429 since the window last changed
        self._epoch = 0               # bumped when the window halves: a request sent before is no new signal
        self._cond = threading.Condition()

    def call(self, send: Callable[[], T]) -> T:
        """``send()`` within the bound; a 429 is waited out and sent again, up to ``retries`` times."""
        attempt = 0
        while True:
            epoch = self._acquire()
            try:
                result = send()
            except KubeError as exc:
                self._release(calm=False, refused=exc.status == 429)
                if exc.status != 429 or attempt >= self.retries:
                    raise
                self._back_off(exc.retry_after, attempt, epoch)
                attempt += 1
                continue
            except BaseException:
                self._release(calm=False)
                raise
            self._release(calm=True)
            return result

    def _acquire(self) -> int:
        while True:
            with self._cond:
                pause = self._resume_at - self._clock()
                if pause <= 0:
                    if self.in_flight < self.window:
                        self.in_flight += 1
                        self.peak = max(self.peak, self.in_flight)
                        return self._epoch
                    self._cond.wait()
                    continue
            self._sleep(pause)

    def _release(self, calm: bool, refused: bool = False) -> None:
        with self._cond:
            self.in_flight -= 1
            if refused:
                self.throttled += 1
            if calm and self.window < self.limit:
                self._calm += 1
                if self._calm >= self.window:
                    self.window += 1
                    self._calm = 0
            self._cond.notify_all()

    def _back_off(self, retry_after: Optional[float], attempt: int, epoch: int) -> None:
        """Pause every request of the client; halve the window once per burst of 429s (the requests already in
        flight when it halved answer with the old load, so their 429s do not halve it again)."""
        wait = retry_after if retry_after is not None else FIRST_BACKOFF * (2 ** attempt)
        with self._cond:
            if epoch == self._epoch:
                self.window = max(1, self.window // 2)
                self._epoch += 1
            self._calm = 0
            self._resume_at = max(self._resume_at, self._clock() + min(wait, self.max_wait))
