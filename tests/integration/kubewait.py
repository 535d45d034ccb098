"""Polling for the integration tests (a module of its own: test modules must not import from conftest,
whose name pytest shares between folders)."""


def wait_for(check, timeout: float = 60.0, interval: float = 0.5, what: str = "condition"):
    """Poll ``check`` until it returns a truthy value; fail the test with ``what`` after ``timeout``."""
    import time

    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except Exception as exc:  # noqa: BLE001 - transient API errors while polling
            last = exc
        else:
            if last:
                return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last: {last!r}")
