"""Version skew between the install role and the image it deployed (docs/install.md, "Version skew").

The install role tells every container which collection version it was written for
(``C5C3_ORDERS_INSTALL_VERSION``). A controller or pass of another version would read the role's objects - its
flags, its RBAC, its CRDs - with other expectations, so it refuses to start and says which two versions met, unless
the platform allowed the skew (``C5C3_ORDERS_ALLOW_VERSION_SKEW``, for a staged upgrade), when it only warns. The
message also goes to the container's termination log, so the install's wait names it.
"""
import os
from typing import Mapping, Optional

from . import __version__

EXPECTED = "C5C3_ORDERS_INSTALL_VERSION"
ALLOW = "C5C3_ORDERS_ALLOW_VERSION_SKEW"
TERMINATION_LOG = "/dev/termination-log"
REFUSED = 3  # the exit code of a refused start


def skew(expected: str, actual: str = __version__) -> Optional[str]:
    """The message for a role of ``expected`` that deployed an image of ``actual``; None when they agree (or the role
    said nothing)."""
    expected = (expected or "").strip()
    if not expected or expected == actual:
        return None
    return (f"version skew: this image runs c5c3.orders {actual}, the install role that deployed it is {expected}; "
            f"install the image of {expected} (c5c3_install_image) or allow the skew "
            f"(c5c3_install_allow_version_skew)")


def allowed(environ: Mapping[str, str]) -> bool:
    return (environ.get(ALLOW) or "").strip().lower() in ("1", "true", "yes")


def refuse_on_skew(environ: Mapping[str, str], log, termination_log: Optional[str] = None) -> int:
    """0 to go on, ``REFUSED`` to stop; logs (and, on refusal, writes the termination log) why."""
    termination_log = termination_log or TERMINATION_LOG
    message = skew(environ.get(EXPECTED, ""))
    if message is None:
        return 0
    if allowed(environ):
        log.warning("%s (allowed: going on)", message)
        return 0
    log.error("%s", message)
    if os.path.exists(termination_log):
        try:
            with open(termination_log, "w", encoding="utf-8") as fh:
                fh.write("c5c3.orders: " + message)
        except OSError:
            pass  # the log line above says it all the same
    return REFUSED
