# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The API resources a pass reads and writes, with their REST paths (no discovery round trips)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple


class Resource(namedtuple("Resource", "api_version kind plural")):
    """A namespaced resource type: ``apiVersion``, ``kind`` and its plural path segment."""

    @property
    def group_version_path(self):
        return "/api/v1" if self.api_version == "v1" else "/apis/" + self.api_version

    def collection(self, namespace=None):
        if namespace:
            return "%s/namespaces/%s/%s" % (self.group_version_path, namespace, self.plural)
        return "%s/%s" % (self.group_version_path, self.plural)

    def item(self, namespace, name, subresource=None):
        path = "%s/%s" % (self.collection(namespace), name)
        return path + "/" + subresource if subresource else path


KEYSTONEUSER = Resource("c5c3.io/v1alpha1", "KeystoneUser", "keystoneusers")
CONTROLPLANE = Resource("c5c3.io/v1alpha1", "ControlPlane", "controlplanes")
ROLE_ASSIGNMENT = Resource("c5c3.io/v1alpha1", "KeystoneRoleAssignment", "keystoneroleassignments")
APP_CREDENTIAL = Resource("c5c3.io/v1alpha1", "KeystoneApplicationCredential", "keystoneapplicationcredentials")
KORC_USER = Resource("openstack.k-orc.cloud/v1alpha1", "User", "users")
SECRET = Resource("v1", "Secret", "secrets")
PUSHSECRET = Resource("external-secrets.io/v1alpha1", "PushSecret", "pushsecrets")
SECRETSTORE = Resource("external-secrets.io/v1", "SecretStore", "secretstores")
CLUSTERSECRETSTORE = Resource("external-secrets.io/v1", "ClusterSecretStore", "clustersecretstores")

_BY_KIND = dict(((r.api_version, r.kind), r) for r in (
    KEYSTONEUSER, CONTROLPLANE, ROLE_ASSIGNMENT, APP_CREDENTIAL, KORC_USER, SECRET, PUSHSECRET, SECRETSTORE,
    CLUSTERSECRETSTORE))


def resource_for(api_version, kind):
    """The Resource of an object or action; KeyError for a kind the collection never touches."""
    return _BY_KIND[(api_version, kind)]
