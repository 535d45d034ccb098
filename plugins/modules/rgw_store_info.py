#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: rgw_store_info
short_description: Tell whether a Ceph RGW can give buckets credentials of their own, and if not, why
version_added: 0.2.0
description:
  - Probes a Ceph RADOS gateway's admin API with an admin credential and reports whether the gateway and the
    credential can serve per-bucket credentials (RGW accounts, Ceph Squid 19.2 or later), and otherwise the
    one cause, with a message naming what to do.
  - The same probe sets the C(PerBucketCredentialsReady) condition of an C(ObjectStore).
  - "At most three read-only, signed (SigV4) admin requests: C(GET /admin/info), a C(GET /admin/account) of
    an id nobody is given (only a 405 answer counts: the gateway predates accounts), and C(GET /admin/user)
    of the credential's own access key (its capabilities; read also when C(/admin/info) is refused, so that
    every missing capability is named at once)."
  - "It requires exactly what the per-bucket credential flows sign with the admin credential: C(info=read)
    (C(/admin/info)), C(users=read) (reading users and their keys, its own record), C(users=write) (creating
    users, adopting a legacy user, creating and removing keys) and C(accounts=write) (creating accounts)."
  - Never returns or logs the access key or the secret key.
author:
  - c5c3.orders developers (@c5c3)
extends_documentation_fragment:
  - c5c3.orders.attributes
attributes:
  check_mode:
    support: full
    details: The module only reads; it runs the same in check mode.
  diff_mode:
    support: none
options:
  endpoint:
    description:
      - The gateway's URL (the one serving S3, IAM and admin ops), for example C(https://rgw.example.com).
    type: str
    required: true
  admin_path:
    description:
      - The path admin ops are served under (the gateway's C(rgw_admin_entry)).
    type: str
    default: admin
  region:
    description:
      - The region requests are signed for. RGW accepts any; it must match what the gateway expects when
        its zonegroup names an api_name.
    type: str
    default: us-east-1
  access_key:
    description:
      - The admin credential's access key.
    type: str
    required: true
  secret_key:
    description:
      - The admin credential's secret key.
    type: str
    required: true
  validate_certs:
    description:
      - Verify the gateway's TLS certificate (HTTPS endpoints).
    type: bool
    default: true
  ca_cert:
    description:
      - A CA bundle (PEM file) to verify the gateway's certificate with, instead of the system's.
    type: path
  timeout:
    description:
      - Seconds to wait for each answer (connecting waits at most 10). A request that gets no answer or
        a 5xx is tried once more.
    type: float
    default: 20
requirements:
  - python >= 3.9
  - botocore (its SigV4 signer) and urllib3
notes:
  - "The admin credential needs the capabilities C(info=read), C(users=*) (read and write) and C(accounts=write):
    C(radosgw-admin caps add --uid=<admin> --caps='info=read;users=*;accounts=write') (C(*) for any of them
    works as well)."
  - Verified against real gateways (Ceph Tentacle 20.2.4 and Reef 18.2.7) by the collection's integration tests.
"""

EXAMPLES = r"""
- name: Probe the object store's gateway
  c5c3.orders.rgw_store_info:
    endpoint: https://rgw.example.com
    access_key: "{{ rgw_admin_access_key }}"
    secret_key: "{{ rgw_admin_secret_key }}"
  register: store

- name: Say what to fix
  ansible.builtin.debug:
    msg: "{{ store.cause }}: {{ store.message }}"
  when: not store.ready

- name: A gateway behind a private CA, admin ops under another path
  c5c3.orders.rgw_store_info:
    endpoint: https://rgw.internal:8443
    admin_path: rgwadmin
    ca_cert: /etc/pki/internal-ca.pem
    access_key: "{{ rgw_admin_access_key }}"
    secret_key: "{{ rgw_admin_secret_key }}"
    timeout: 5
"""

RETURN = r"""
ready:
  description: Whether the gateway and the admin credential can serve per-bucket credentials.
  returned: always
  type: bool
  sample: false
cause:
  description:
    - Why not, as the reason the ObjectStore condition carries; null when ready.
    - One of C(MissingInfoCapability), C(MissingUsersCapability), C(MissingAccountsCapability),
      C(GatewayPredatesAccounts), C(AdminAPIUnreachable), C(AdminCredentialInvalid).
    - C(MissingUsersCapability) - the credential cannot read its own record (no C(users=read); then nothing is
      concluded about C(accounts)), or its record shows C(users) without read or write access.
    - C(MissingAccountsCapability) - its record shows no C(accounts) capability with write access.
    - The message names every capability found missing, with the C(radosgw-admin caps add) line that grants it.
  returned: always
  type: str
  sample: MissingAccountsCapability
message:
  description: What was seen and what to do (the capability to grant, the status the gateway gave).
  returned: always
  type: str
  sample: >-
    the admin credential is missing the 'users' capability with write access (it holds users=read) and the
    'accounts' capability with write access (it has no 'accounts' capability) (all its caps: info=*;users=read);
    grant it: radosgw-admin caps add --uid=admin --caps='users=write;accounts=write'
gateway:
  description: What the probe learnt about the gateway.
  returned: always
  type: dict
  contains:
    storage_backends:
      description: The backends C(/admin/info) names (empty when it could not be read).
      type: list
      elements: dict
      sample: [{"name": "rados", "cluster_id": "c5c3e0a0-2024-4000-8000-000000000020"}]
    accounts_served:
      description: Whether the gateway serves RGW accounts; null when the probe did not get that far.
      type: bool
      sample: true
    admin_user:
      description: The uid of the admin credential's user, when it could be read.
      type: str
      sample: admin
    admin_capabilities:
      description: The admin user's capabilities as C(type=perm), when they could be read.
      type: list
      elements: str
      sample: ["accounts=*", "buckets=*", "info=*", "users=*"]
api_requests:
  description: The number of HTTP requests the probe sent (retries included).
  returned: always
  type: int
  sample: 3
"""

import os
import traceback

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.c5c3.orders.plugins.module_utils.rgw import signing
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.admin import HAS_URLLIB3, RgwAdminClient
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.probe import probe

ARGUMENT_SPEC = dict(
    endpoint=dict(type="str", required=True),
    admin_path=dict(type="str", default="admin"),
    region=dict(type="str", default="us-east-1"),
    access_key=dict(type="str", required=True, no_log=True),
    secret_key=dict(type="str", required=True, no_log=True),
    validate_certs=dict(type="bool", default=True),
    ca_cert=dict(type="path"),
    timeout=dict(type="float", default=20),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    if not (signing.HAS_BOTOCORE and HAS_URLLIB3):
        module.fail_json(msg=missing_required_lib("botocore"),
                         exception="".join(traceback.format_exception_only(
                             type(signing.BOTOCORE_IMPORT_ERROR), signing.BOTOCORE_IMPORT_ERROR)))
    params = module.params
    if params["timeout"] <= 0:
        module.fail_json(msg="timeout must be a positive number of seconds")
    if params["ca_cert"] and not os.path.isfile(params["ca_cert"]):
        module.fail_json(msg=f"ca_cert {params['ca_cert']} is not a readable file")
    try:
        credentials = RgwCredentials(params["access_key"], params["secret_key"])
        admin = RgwAdminClient(params["endpoint"], credentials, admin_path=params["admin_path"],
                               region=params["region"], validate_certs=params["validate_certs"],
                               ca_cert=params["ca_cert"], timeout=params["timeout"])
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    result = probe(admin)
    module.exit_json(changed=False, ready=result.verdict.ready, cause=result.verdict.cause,
                     message=result.verdict.message, gateway=result.gateway(), api_requests=admin.requests)


if __name__ == "__main__":
    main()
