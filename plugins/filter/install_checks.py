# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What the install role checks before it applies and after it rolls out, as plain data to messages (pure).

- ``install_missing_prerequisites``: the kinds the controller reads and writes but does not install
  (``plugins/module_utils/k8s/resources.py``: the ControlPlane, K-ORC's User, ESO's PushSecret and SecretStore) and
  the SecretStore each ControlPlane backs its passwords up through (``plugins/module_utils/orders/secretstore.py``),
  each one missing named once, so an install on an unprepared cluster fails before it applies anything instead of
  leaving a controller whose every pass fails.
- ``install_image_skew``: whether the image's tag names another collection version than the role's, so that a skew is
  refused before anything is applied (docs/install.md, "Version skew").
- ``install_rollout_complete`` / ``install_rollout_failure``: whether the controller Deployment rolled out (as
  ``kubectl rollout status`` judges it) and, when not, one line naming each Pod's state and reason - the image it
  cannot pull, the exit code of a crash loop, why it is not scheduled - instead of a bare timeout.

Used by the role c5c3.orders.install (roles/install/tasks/checks.yml, roles/install/tasks/wait.yml); kept in Python so
the rules are unit-tested (tests/unit/install/).
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.resources import (
    CONTROLPLANE,
    KORC_USER,
    PUSHSECRET,
    SECRETSTORE,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secretstore import (
    DEFAULT_SECRET_STORE,
    NAMESPACED_KIND,
)

# Who provides each kind the controller needs but the install does not apply.
PROVIDERS = (
    (CONTROLPLANE, "the c5c3 operator (ControlPlane)"),
    (KORC_USER, "K-ORC (User)"),
    (PUSHSECRET, "External Secrets Operator (PushSecret)"),
    (SECRETSTORE, "External Secrets Operator (SecretStore)"),
)
IMAGE_REASONS = frozenset(["ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName",
                           "ImageInspectError", "RegistryUnavailable"])
MAX_PODS = 5
MAX_TEXT = 300


def crd_name(resource):
    """``<plural>.<group>`` of a resource (``users.openstack.k-orc.cloud``)."""
    group, _version = resource.api_version.split("/", 1)
    return "%s.%s" % (resource.plural, group)


def required_crds():
    """``[(crd name, served version, provider)]`` of every kind the install needs and does not apply."""
    return [(crd_name(r), r.api_version.split("/", 1)[1], provider) for r, provider in PROVIDERS]


def _dict(value):
    return value if isinstance(value, dict) else {}


def _list(value):
    return value if isinstance(value, list) else []


def _str(value):
    return value if isinstance(value, str) else ""


def _int(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _short(text):
    text = " ".join(_str(text).split())
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 3] + "..."


def _served_versions(crd):
    return set(_str(v.get("name")) for v in _list(_dict(crd.get("spec")).get("versions"))
               if isinstance(v, dict) and v.get("served") is True)


def _active_namespaces(namespaces, mark):
    """Names of the namespaces not terminating whose labels carry ``mark`` (``None``: every namespace)."""
    out = set()
    for ns in _list(namespaces):
        meta = _dict(_dict(ns).get("metadata"))
        if _str(_dict(ns.get("status")).get("phase")) == "Terminating" or meta.get("deletionTimestamp"):
            continue
        labels = _dict(meta.get("labels"))
        if all(labels.get(k) == v for k, v in _dict(mark).items()):
            out.add(_str(meta.get("name")))
    return out


def missing_prerequisites(crds, control_planes=None, secret_stores=None, namespaces=None, mark=None, extra_crds=()):
    """Every prerequisite missing, one string each (empty: nothing missing).

    ``crds``: the CustomResourceDefinitions found (objects); ``control_planes``, ``secret_stores``: every one on the
    cluster (``None``: could not be listed, the CRD's message says why); ``namespaces``: every Namespace (the store
    is checked only for ControlPlanes in a namespace that exists, is not terminating and carries ``mark``, the
    labels the controller is granted by - those it will work in); ``extra_crds``: CRD names the install needs but
    does not apply this time (the collection's own, with ``c5c3_install_crd: false``).
    """
    found = dict((_str(_dict(c.get("metadata")).get("name")), c) for c in _list(crds) if isinstance(c, dict))
    missing = []
    needed = required_crds() + [(name, "", "the collection (c5c3_install_crd is false)") for name in extra_crds]
    unusable = set()
    for name, version, provider in needed:
        crd = found.get(name)
        if crd is None:
            missing.append("CustomResourceDefinition %s, from %s" % (name, provider))
            unusable.add(name)
        elif version and version not in _served_versions(crd):
            missing.append("CustomResourceDefinition %s serves %s, not %s, which the controller uses (%s)"
                           % (name, ", ".join(sorted(_served_versions(crd))) or "no version", version, provider))
            unusable.add(name)
    if crd_name(CONTROLPLANE) in unusable or crd_name(SECRETSTORE) in unusable or control_planes is None:
        return missing
    if secret_stores is None:
        missing.append("the SecretStores could not be listed as %s" % SECRETSTORE.api_version)
        return missing
    stores = set((_str(_dict(s.get("metadata")).get("namespace")), _str(_dict(s.get("metadata")).get("name")))
                 for s in _list(secret_stores) if isinstance(s, dict))
    working = _active_namespaces(namespaces, mark) if namespaces is not None else None
    for cp in sorted(_list(control_planes), key=lambda o: (_str(_dict(_dict(o).get("metadata")).get("namespace")),
                                                           _str(_dict(_dict(o).get("metadata")).get("name")))):
        meta = _dict(_dict(cp).get("metadata"))
        namespace, name = _str(meta.get("namespace")), _str(meta.get("name"))
        if meta.get("deletionTimestamp") or (working is not None and namespace not in working):
            continue
        ref = _dict(_dict(cp.get("spec")).get("secretStoreRef"))
        ref_name, ref_kind = _str(ref.get("name")), _str(ref.get("kind"))
        if ref_name and ref_kind != NAMESPACED_KIND:
            missing.append("a SecretStore for ControlPlane %s/%s: its spec.secretStoreRef names %s %r, and the "
                           "controller backs up only through a SecretStore in namespace %s"
                           % (namespace, name, ref_kind or "ClusterSecretStore (an empty kind)", ref_name, namespace))
            continue
        store = ref_name or DEFAULT_SECRET_STORE
        if (namespace, store) not in stores:
            missing.append("SecretStore %s/%s, through which ControlPlane %s/%s backs up its orders' credentials"
                           % (namespace, store, namespace, name))
    return missing


# -- the rollout --------------------------------------------------------------------------------------------------

def _condition(obj, kind):
    for cond in _list(_dict(_dict(obj).get("status")).get("conditions")):
        if isinstance(cond, dict) and cond.get("type") == kind:
            return cond
    return {}


def rollout_complete(deployment):
    """Whether ``deployment`` has rolled out, as ``kubectl rollout status`` judges it: the controller saw the
    current generation, every replica runs the current template, no old one is left, and all are available."""
    dep = _dict(deployment)
    if not dep:
        return False
    meta, spec, status = _dict(dep.get("metadata")), _dict(dep.get("spec")), _dict(dep.get("status"))
    wanted = spec.get("replicas")
    wanted = 1 if wanted is None else _int(wanted)
    if _int(status.get("observedGeneration")) < _int(meta.get("generation")):
        return False
    if _condition(dep, "Progressing").get("reason") == "ProgressDeadlineExceeded":
        return False
    updated = _int(status.get("updatedReplicas"))
    return (updated >= wanted and _int(status.get("replicas")) <= updated
            and _int(status.get("availableReplicas")) >= updated)


def _image_of(pod, container):
    for c in _list(_dict(_dict(pod).get("spec")).get("containers")) + \
            _list(_dict(_dict(pod).get("spec")).get("initContainers")):
        if isinstance(c, dict) and c.get("name") == container:
            return _str(c.get("image"))
    return ""


def _terminated(state):
    """``reason, exit code N: message`` of a terminated state."""
    term = _dict(state.get("terminated"))
    text = "%s, exit code %s" % (_str(term.get("reason")) or "terminated", term.get("exitCode", "?"))
    if _str(term.get("message")):
        text += ": " + _short(term.get("message"))
    return text


def container_problem(pod, status):
    """What keeps one container from running and ready, or ``""``."""
    name = _str(status.get("name"))
    state, last = _dict(status.get("state")), _dict(status.get("lastState"))
    restarts = _int(status.get("restartCount"))
    waiting = _dict(state.get("waiting"))
    reason = _str(waiting.get("reason"))
    detail = (": " + _short(waiting.get("message"))) if _str(waiting.get("message")) else ""
    if reason in IMAGE_REASONS:
        return "container %s cannot get its image %s: %s%s" % (
            name, _str(status.get("image")) or _image_of(pod, name), reason, detail)
    if reason == "CrashLoopBackOff":
        text = "container %s is crash-looping (CrashLoopBackOff, %d restarts)" % (name, restarts)
        if last.get("terminated"):
            text += "; it last ended: " + _terminated(last)
        return text + " (kubectl logs --previous shows its output)"
    if "waiting" in state:
        text = "container %s is waiting: %s%s" % (name, reason or "no reason given", detail)
        if last.get("terminated"):
            text += "; it last ended: " + _terminated(last)
        return text
    if "terminated" in state:
        return "container %s has ended: %s" % (name, _terminated(state))
    if "running" in state and status.get("ready") is not True:
        text = "container %s is running but not ready (its readiness probe fails)" % name
        if restarts:
            text += "; %d restarts" % restarts
            if last.get("terminated"):
                text += ", it last ended: " + _terminated(last)
        return text
    return ""


def pod_problem(pod):
    """One clause on what keeps ``pod`` from being available."""
    pod = _dict(pod)
    name = _str(_dict(pod.get("metadata")).get("name"))
    status = _dict(pod.get("status"))
    phase = _str(status.get("phase")) or "Unknown"
    scheduled = _condition(pod, "PodScheduled")
    if scheduled.get("status") == "False":
        return "Pod %s is Pending, not scheduled: %s: %s" % (
            name, _str(scheduled.get("reason")) or "Unschedulable", _short(scheduled.get("message")) or "no message")
    if phase == "Pending" and not scheduled and not _str(_dict(pod.get("spec")).get("nodeName")):
        return "Pod %s is Pending, not scheduled yet (no scheduler has considered it)" % name
    problems = []
    for key in ("initContainerStatuses", "containerStatuses"):
        for cstatus in _list(status.get(key)):
            if not isinstance(cstatus, dict):
                continue
            if key == "initContainerStatuses" and _dict(cstatus.get("state")).get("terminated") and \
                    _int(_dict(_dict(cstatus.get("state")).get("terminated")).get("exitCode")) == 0:
                continue
            problem = container_problem(pod, cstatus)
            if problem:
                problems.append(problem)
    if problems:
        return "Pod %s is %s: %s" % (name, phase, "; ".join(problems))
    if phase in ("Failed", "Unknown") or not status.get("containerStatuses"):
        reason = _str(status.get("reason")) or _str(_condition(pod, "Ready").get("reason"))
        message = _short(status.get("message")) or _short(_condition(pod, "Ready").get("message"))
        return "Pod %s is %s%s%s" % (name, phase, (": " + reason) if reason else "",
                                     (" - " + message) if message else "")
    if _condition(pod, "Ready").get("status") != "True":
        return "Pod %s is %s and not Ready: %s" % (name, phase, _short(_condition(pod, "Ready").get("message"))
                                                   or "no reason given")
    return ""


def rollout_failure(deployment, pods=None, timeout=None):
    """``""`` once ``deployment`` has rolled out; else one line: its replica counts, any failure its conditions
    report (a Pod the ReplicaSet could not create: Pod Security, quota), and what each of its Pods is stuck on."""
    dep = _dict(deployment)
    if not dep:
        return "the controller Deployment does not exist"
    if rollout_complete(dep):
        return ""
    meta, spec, status = _dict(dep.get("metadata")), _dict(dep.get("spec")), _dict(dep.get("status"))
    wanted = spec.get("replicas")
    wanted = 1 if wanted is None else _int(wanted)
    within = " within %ss" % timeout if timeout not in (None, "") else ""
    head = "Deployment %s/%s did not roll out%s: %d of %d replicas updated, %d available" % (
        _str(meta.get("namespace")), _str(meta.get("name")), within, _int(status.get("updatedReplicas")), wanted,
        _int(status.get("availableReplicas")))
    parts = [head]
    for kind in ("ReplicaFailure", "Progressing"):
        cond = _condition(dep, kind)
        if (kind == "ReplicaFailure" and cond.get("status") == "True") or \
                (kind == "Progressing" and cond.get("reason") == "ProgressDeadlineExceeded"):
            parts.append("%s: %s" % (_str(cond.get("reason")) or kind, _short(cond.get("message"))))
    live = [p for p in _list(pods) if isinstance(p, dict)
            and not _dict(p.get("metadata")).get("deletionTimestamp")]
    live.sort(key=lambda p: _str(_dict(p.get("metadata")).get("creationTimestamp")), reverse=True)
    problems = [problem for problem in (pod_problem(p) for p in live[:MAX_PODS]) if problem]
    if problems:
        parts.extend(problems)
    elif not live:
        parts.append("no Pod of it exists")
    else:
        parts.append("its Pods report no problem yet (still starting?)")
    return "; ".join(parts)


_VERSION_TAG = re.compile(r"^v?(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?)$")


def image_skew(image, version):
    """``""`` unless ``image``'s tag names a collection version other than ``version`` (the role's); a tag that is no
    version (``latest``, a branch) or no tag at all cannot tell, and the container checks at its start instead
    (controller/c5c3_orders_controller/skew.py)."""
    ref = _str(image).split("@", 1)[0]
    name, sep, tag = ref.rpartition(":")
    if not sep or "/" in tag:
        return ""
    found = _VERSION_TAG.match(tag)
    if not found or found.group(1) == _str(version):
        return ""
    return ("c5c3.orders: version skew: the image %s is c5c3.orders %s, this install role is %s; install the image "
            "of %s (c5c3_install_image) or allow the skew (c5c3_install_allow_version_skew); nothing was applied"
            % (_str(image), found.group(1), _str(version), _str(version)))


class FilterModule(object):
    def filters(self):
        return {
            "install_image_skew": image_skew,
            "install_missing_prerequisites": missing_prerequisites,
            "install_rollout_complete": rollout_complete,
            "install_rollout_failure": rollout_failure,
        }
