"""The result mask (k8s/mask.py): every occurrence of a hidden value is masked, as Ansible's ``no_log_values``
filter would mask it, and the cost grows with the size of the result, not with results times values."""
from __future__ import annotations

import secrets
import time

from ansible.module_utils.basic import remove_values

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.mask import MASK, SecretMask

PASSWORD = "Zk3_pX9-" + "q" * 35          # a token_urlsafe(32)-like password
ACCESS_KEY = "AKIA0123456789ABCDEF"
CLOUDS = f'clouds:\n  admin:\n    auth:\n      password: "{PASSWORD}"\n'


def test_a_token_is_masked_wherever_it_occurs():
    mask = SecretMask([PASSWORD, ACCESS_KEY])
    for text in (PASSWORD, f"x {PASSWORD} y", f"key={ACCESS_KEY}", f"pre_{PASSWORD}_post", f"{ACCESS_KEY}{PASSWORD}",
                 f"'{PASSWORD}'", f"{PASSWORD}-{PASSWORD}"):
        masked = mask.apply(text)
        assert PASSWORD not in masked and ACCESS_KEY not in masked and MASK in masked, text


def test_keys_values_lists_and_nested_results():
    mask = SecretMask([PASSWORD])
    result = {"orders": [{"name": "app", "msg": f"refused: {PASSWORD}"}], PASSWORD: 1, "n": 3, "ok": True}
    masked = mask.apply(result)
    assert PASSWORD not in repr(masked)
    assert masked["orders"][0]["name"] == "app" and masked["n"] == 3 and masked["ok"] is True


def test_a_document_is_masked_through_the_token_it_holds_and_other_values_one_by_one():
    mask = SecretMask([PASSWORD, CLOUDS, "short", "with space inside"])
    assert mask.others == ["with space inside", "short"]          # the document is covered by its password
    masked = mask.apply(f"{CLOUDS} short, with space inside")
    assert PASSWORD not in masked and "short" not in masked and "with space inside" not in masked


def test_nothing_hidden_changes_nothing():
    result = {"a": ["b", 1]}
    assert SecretMask([]).apply(result) is result
    assert SecretMask([None, ""]).apply(result) is result


def test_it_masks_what_ansibles_filter_masks():
    values = [secrets.token_urlsafe(32) for _ in range(50)] + [ACCESS_KEY]
    texts = [f"order {i}: {values[i % len(values)]} and {values[(i * 7) % len(values)]}." for i in range(200)]
    texts += ["plain text", "ns/app-12345678-user-user", ""]
    ours = SecretMask(values).apply(texts)
    theirs = remove_values(texts, set(values))
    assert ours == theirs


def test_the_cost_grows_with_the_result_not_with_result_times_values():
    """A pass at scale: the time is printed, never asserted (Ansible's filter took minutes on such a result)."""
    values = [secrets.token_urlsafe(32) for _ in range(20000)]
    mask = SecretMask(values)
    result = [{"name": f"app-{i}", "namespace": f"tenant-{i % 50}", "message": "the user is not provisioned yet"}
              for i in range(20000)]
    started = time.process_time()
    mask.apply(result)
    spent = time.process_time() - started
    print(f"masked a 20,000-order result against 20,000 values in {spent:.2f} CPU s")  # reported, not asserted
