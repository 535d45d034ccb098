"""What the access sync's writes came to when the cluster moved on after the read
(plugins/filter/namespace_access_outcome.py, used by roles/namespace_access/tasks/write.yml)."""
import pytest

from ansible_collections.c5c3.orders.plugins.filter import namespace_access_outcome as O

# Word for word as kubernetes.core.k8s reported a binding deleted between the sync's read and its revoke (the
# namespace was being deleted by another team), in a fresh-clone CI run.
BINDING_GONE = (
    "Failed to delete object: b'{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
    "\"message\":\"rolebindings.rbac.authorization.k8s.io \\\\\"t-inst-930d95-tenant\\\\\" not found\","
    "\"reason\":\"NotFound\",\"details\":{\"name\":\"t-inst-930d95-tenant\",\"group\":\"rbac.authorization.k8s.io\","
    "\"kind\":\"rolebindings\"},\"code\":404}\\n'")
NAMESPACE_GOING = ("Failed to apply object: b'{\"kind\":\"Status\",\"message\":\"rolebindings \\\"x\\\" is forbidden: "
                   "unable to create new content in namespace t-1 because it is being terminated\","
                   "\"reason\":\"Forbidden\",\"code\":403}'")
NAMESPACE_GONE = ("Failed to apply object: b'{\"kind\":\"Status\",\"message\":\"namespaces \\\"t-1\\\" not found\","
                  "\"reason\":\"NotFound\",\"code\":404}'")
REFUSED = ("Failed to apply object: b'{\"kind\":\"Status\",\"message\":\"rolebindings \\\"x\\\" is forbidden: "
           "ValidatingAdmissionPolicy 'c5c3-orders-access' denied request\",\"reason\":\"Invalid\",\"code\":422}'")
UNMARKED = ("Failed to apply object: b'{\"kind\":\"Status\",\"message\":\"rolebindings.rbac.authorization.k8s.io "
            "\\\"t-1-tenant\\\" is forbidden: ValidatingAdmissionPolicy 't-1-access-sync' with binding 't-1-access-sync' "
            "denied request: c5c3.orders: the access sync grants only in namespaces the platform marked for it "
            "(c5c3.io/tenant=true); t-1 is not marked\",\"reason\":\"Forbidden\",\"code\":403}'")
UNREACHABLE = "Failed to delete object: HTTPSConnectionPool(host='127.0.0.1', port=6443): Read timed out."

SKIPPED = {"skipped": True, "changed": False}
OK = {"changed": True, "failed": False}


def failed(msg):
    return {"failed": True, "changed": False, "msg": msg}


def loop(*items):
    return {"changed": True, "results": list(items)}


def loop_skipped(n=2):
    return loop(*[dict(SKIPPED) for _ in range(n)])


@pytest.mark.parametrize("msg", [BINDING_GONE, NAMESPACE_GOING, NAMESPACE_GONE])
def test_a_failure_that_only_says_gone_or_going_is_recognised(msg):
    assert O.gone(msg) and O.redo(msg)


def test_a_refusal_as_not_marked_is_redone_one_by_one_but_is_not_gone():
    assert O.redo(UNMARKED) and not O.gone(UNMARKED)


@pytest.mark.parametrize("msg", [REFUSED, UNREACHABLE, "", None, {"msg": 1}])
def test_any_other_failure_is_not_taken_for_gone(msg):
    assert not O.gone(msg) and not O.redo(msg)


def steps(revoke=(SKIPPED, None), grant=(SKIPPED, None)):
    return {"revoking": [revoke[0], revoke[1] or loop_skipped()], "granting": [grant[0], grant[1] or loop_skipped()]}


def test_a_binding_deleted_between_read_and_revoke_counts_as_revoked():
    # the batch stopped at the vanished binding; redone one by one, the binding was already gone (ok) ...
    assert O.write_errors(steps(revoke=(failed(BINDING_GONE), loop(OK, OK))), "management") == []
    # ... or vanished between the one-by-one run's read and its delete
    assert O.write_errors(steps(revoke=(failed(BINDING_GONE), loop(OK, failed(BINDING_GONE)))), "management") == []


def test_a_revoke_that_fails_for_another_reason_is_still_an_error():
    # the batch failed with something else: the one-by-one run never ran
    assert O.write_errors(steps(revoke=(failed(UNREACHABLE), None)), "edge-1") == [
        "edge-1: revoking failed (%s)" % UNREACHABLE]
    # one by one, one item gone and another refused: the refusal is reported
    got = O.write_errors(steps(revoke=(failed(BINDING_GONE), loop(failed(BINDING_GONE), failed(REFUSED)))), "m")
    assert len(got) == 1 and got[0].startswith("m: revoking failed (") and "denied request" in got[0]


def test_a_grant_in_a_namespace_gone_or_going_is_no_failure():
    one_by_one = loop(OK, failed(NAMESPACE_GOING), failed(NAMESPACE_GONE))
    assert O.write_errors(steps(grant=(failed(NAMESPACE_GOING), one_by_one)), "management") == []


def test_a_refused_grant_is_an_error_whether_batched_or_one_by_one():
    assert O.write_errors(steps(grant=(failed(REFUSED), None)), "management") == [
        "management: granting failed (%s)" % REFUSED]
    one_by_one = loop(failed(NAMESPACE_GOING), failed(REFUSED))
    got = O.write_errors(steps(grant=(failed(NAMESPACE_GOING), one_by_one)), "management")
    assert len(got) == 1 and "granting failed" in got[0] and "denied request" in got[0]


def test_both_steps_report_and_long_messages_are_cut():
    long = "x" * 2000
    got = O.write_errors(steps(revoke=(failed(long), None), grant=(failed(REFUSED), None)), "edge-1")
    assert [g.split(" (")[0] for g in got] == ["edge-1: revoking failed", "edge-1: granting failed"]
    assert len(got[0]) < 760 and got[0].endswith("...)")


def test_steps_that_did_not_run_or_succeeded_report_nothing():
    assert O.write_errors(steps(), "management") == []
    assert O.write_errors(steps(revoke=(OK, None), grant=(OK, None)), "management") == []
    assert O.write_errors({}, "management") == []


MARKS = {"tenant": {"c5c3.io/tenant": "true"}, "controlplane": {"c5c3.io/controlplane": "true"}}


def grant(ns, kind="tenant"):
    return {"kind": "RoleBinding", "metadata": {"name": "t-1-%s" % kind, "namespace": ns,
                                                "labels": {"c5c3.io/grant": kind}}}


def namespace(name, labels=None, terminating=False):
    ns = {"metadata": {"name": name, "labels": dict(labels or {})}, "status": {"phase": "Active"}}
    if terminating:
        ns["status"]["phase"] = "Terminating"
    return ns


def refused(item):
    return dict(failed(UNMARKED), item=item)


def test_a_grant_refused_as_not_marked_is_looked_at_again():
    assert O.refused_unmarked(loop(OK, refused(grant("t-1"))))
    assert not O.refused_unmarked(loop(OK, failed(NAMESPACE_GONE)))
    assert not O.refused_unmarked(loop_skipped())
    assert not O.refused_unmarked(None)


@pytest.mark.parametrize("now", [
    [namespace("t-1")],                                      # the platform withdrew the mark
    [namespace("t-1", {"c5c3.io/tenant": "false"})],         # or changed it
    [namespace("t-1", {"c5c3.io/tenant": "true"}, terminating=True)],  # or is deleting the namespace
    [],                                                      # or deleted it
])
def test_a_grant_refused_as_not_marked_is_no_failure_once_the_namespace_lacks_the_mark(now):
    got = O.write_errors(steps(grant=(failed(UNMARKED), loop(OK, refused(grant("t-1"))))), "management", now, MARKS)
    assert got == []


def test_a_refusal_as_not_marked_the_namespace_does_not_explain_is_an_error():
    each = loop(refused(grant("t-1")))
    # the namespace still carries the sync's mark: the policy and the sync's selector disagree
    still = [namespace("t-1", {"c5c3.io/tenant": "true"})]
    assert O.write_errors(steps(grant=(failed(UNMARKED), each)), "m", still, MARKS) == [
        "m: granting failed (%s)" % UNMARKED]
    # the sync has no mark for the grant (its selector emptied): nothing to judge the namespace by
    assert len(O.write_errors(steps(grant=(failed(UNMARKED), each)), "m", [namespace("t-1")], {"tenant": {}})) == 1
    assert len(O.write_errors(steps(grant=(failed(UNMARKED), each)), "m", [namespace("t-1")], None)) == 1
    # the namespaces could not be read again
    assert len(O.write_errors(steps(grant=(failed(UNMARKED), each)), "m", None, MARKS)) == 1
    # the mark of the other kind is what the namespace lacks: a controlplane grant is judged by its own mark
    cp = loop(refused(grant("cp-1", "controlplane")))
    assert len(O.write_errors(steps(grant=(failed(UNMARKED), cp)), "m",
                              [namespace("cp-1", {"c5c3.io/controlplane": "true"})], MARKS)) == 1
    assert O.write_errors(steps(grant=(failed(UNMARKED), cp)), "m",
                          [namespace("cp-1", {"c5c3.io/tenant": "true"})], MARKS) == []
