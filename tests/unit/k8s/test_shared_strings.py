"""Lists that share equal strings (k8s/shared.py): the same objects, compared and serialised as before, with one
string object per value."""
import copy
import json

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.service import KubeService
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.resources import KEYSTONEUSER
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.shared import share_strings


def decoded(i):
    text = json.dumps({"metadata": {"name": f"o-{i}", "namespace": "tenant-a", "uid": f"u-{i}",
                                    "labels": {"c5c3.io/keystoneuser-namespace": "tenant-a"},
                                    "finalizers": ["c5c3.io/keystoneuser"]},
                       "spec": {"controlPlaneRef": {"name": "cp", "namespace": "openstack"}, "passwordGeneration": 1},
                       "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "AllReady",
                                                  "message": "the user, its password and its backup are in place",
                                                  "observedGeneration": 1}], "ok": True, "none": None}})
    return json.loads(text)


def test_values_stay_equal_and_equal_values_become_one_object():
    items = [decoded(i) for i in range(3)]
    before = copy.deepcopy(items)
    seen = {}
    share_strings(items, seen)
    assert items == before and json.dumps(items) == json.dumps(before)
    first, second = items[0]["status"]["conditions"][0], items[1]["status"]["conditions"][0]
    assert first["message"] is second["message"] and first["reason"] is second["reason"]
    assert items[0]["metadata"]["finalizers"][0] is items[2]["metadata"]["finalizers"][0]  # in lists too
    assert items[0]["metadata"]["labels"]["c5c3.io/keystoneuser-namespace"] is items[1]["metadata"]["namespace"]
    assert items[0]["metadata"]["uid"] != items[1]["metadata"]["uid"]
    assert items[0]["status"]["ok"] is True and items[0]["status"]["none"] is None


def test_a_later_page_shares_the_strings_of_an_earlier_one():
    seen = {}
    page1, page2 = [decoded(0)], [decoded(1)]
    share_strings(page1, seen)
    share_strings(page2, seen)
    assert page1[0]["spec"]["controlPlaneRef"]["namespace"] is page2[0]["spec"]["controlPlaneRef"]["namespace"]


class Pages:
    """A client answering a list in two pages of decoded JSON."""

    def __init__(self):
        self.calls = 0

    def request(self, method, path, query=None, **_kw):
        self.calls += 1
        if "continue" not in query:
            return {"items": [decoded(0)], "metadata": {"continue": "next"}}
        return {"items": [decoded(1)], "metadata": {}}


def test_the_pass_service_shares_and_the_plain_one_does_not():
    shared = KubeService(Pages(), "c5c3-orders", share=True).list(KEYSTONEUSER)
    plain = KubeService(Pages(), "c5c3-orders").list(KEYSTONEUSER)
    assert shared == plain and len(shared) == 2
    assert shared[0]["status"]["conditions"][0]["message"] is shared[1]["status"]["conditions"][0]["message"]
    assert plain[0]["status"]["conditions"][0]["message"] is not plain[1]["status"]["conditions"][0]["message"]
    assert "managedFields" not in shared[0]["metadata"] and shared[0]["kind"] == "KeystoneUser"
