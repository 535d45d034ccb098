# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """Connection options shared by the collection's modules, as kubernetes.core names them."""

    DOCUMENTATION = r"""
options:
  kubeconfig:
    description:
      - Path to a kubeconfig file, or the kubeconfig as a dictionary.
      - Can also be set with the E(K8S_AUTH_KUBECONFIG) environment variable.
      - Treated as a secret (C(no_log)) - a dictionary can carry a token or a client key, so no part of it reaches
        the result, the log or an AWX job event. As Ansible masks every string of a C(no_log) value wherever it
        appears, a dictionary's other strings (the cluster's name, the server URL, C(v1)) are masked in the result
        too; a path, or E(K8S_AUTH_KUBECONFIG), keeps the result readable.
      - Without O(kubeconfig) and O(host), the in-cluster service account is used when the module runs in a
        Pod, otherwise C(~/.kube/config).
    type: raw
  context:
    description:
      - The kubeconfig context to use. Can also be set with E(K8S_AUTH_CONTEXT).
    type: str
  host:
    description:
      - URL of the Kubernetes API server. Can also be set with E(K8S_AUTH_HOST).
    type: str
  api_key:
    description:
      - Bearer token for the API server. Can also be set with E(K8S_AUTH_API_KEY).
    type: str
  username:
    description:
      - User name for basic authentication. Can also be set with E(K8S_AUTH_USERNAME).
    type: str
  password:
    description:
      - Password for basic authentication. Can also be set with E(K8S_AUTH_PASSWORD).
    type: str
  client_cert:
    description:
      - Path to a client certificate. Can also be set with E(K8S_AUTH_CERT_FILE).
    type: path
    aliases: [cert_file]
  client_key:
    description:
      - Path to the client certificate's key. Can also be set with E(K8S_AUTH_KEY_FILE).
    type: path
    aliases: [key_file]
  ca_cert:
    description:
      - Path to a CA bundle to verify the API server with. Can also be set with E(K8S_AUTH_SSL_CA_CERT).
    type: path
    aliases: [ssl_ca_cert]
  validate_certs:
    description:
      - Whether to verify the API server's certificate. Can also be set with E(K8S_AUTH_VERIFY_SSL).
    type: bool
    aliases: [verify_ssl]
  proxy:
    description:
      - An HTTP proxy URL. Can also be set with E(K8S_AUTH_PROXY).
    type: str
  no_proxy:
    description:
      - Comma-separated hosts that bypass O(proxy). Can also be set with E(K8S_AUTH_NO_PROXY).
    type: str
  impersonate_user:
    description:
      - User to impersonate for every request. Can also be set with E(K8S_AUTH_IMPERSONATE_USER).
    type: str
  impersonate_groups:
    description:
      - Groups to impersonate for every request. Can also be set with E(K8S_AUTH_IMPERSONATE_GROUPS)
        (comma-separated).
    type: list
    elements: str
requirements:
  - kubernetes >= 24.2.0, < 36
"""
