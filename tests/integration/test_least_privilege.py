"""Least privilege beyond Secrets (docs/install.md, "Security model"), proven against the real kube-apiserver with the
controller's real identity: a real token of the installed ServiceAccount (``kubectl create token``), so the
apiserver authenticates, authorizes and admits exactly as it would for the Deployment.

Each hole is shown first - RBAC alone grants the verb (``kubectl auth can-i --as=<the account>`` says yes), so
nothing but the admission policy stands between the controller and the write - then the denial (with the
policy's message) and the legitimate write that still passes:

1. admission beyond Secrets: K-ORC Users (never one without the order's labels and layout, never a platform
   account's name however spelt, never another order's password or another domain), PushSecrets (never a push to
   a path its labels and the layout do not imply, never another Secret, never a ClusterSecretStore),
   ObjectStoreAccounts (created only as the pass makes them; only the tenant uid bound, once), Secrets (only
   named as their labels imply; owner labels never changed), orders (never the spec, no label but the scope);
   updates and deletes check the same ownership as creates. A BucketCredential taken to Ready and torn down by
   passes as the account proves the object-storage writes still pass (test_install.py proves the KeystoneUser's);
2. grants by allowlist: a ControlPlane assigning a namespace the platform did not mark grants nothing (reported
   ``unmarked``), the grant follows the mark, and even an access sync run without the allowlist cannot grant there
   (its admission policy refuses);
3. secrets in options: a kubeconfig given as a dictionary with a token reaches no module result, no ansible-runner
   artifact (AWX job events), no Ansible log, even at -vvv;
6. metrics and network: the metrics endpoint binds where the role says, a NetworkPolicy admits only the scraper's
   namespace, and the optional ServiceMonitor and PrometheusRule (with alerts on metrics the controller really
   exports) come and go with their settings.
"""
import json
import re
import sys
import uuid
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

import objectstores
from accounts import can_i
from orders import CP_NS, CP_NAME, GROUP, TENANT_LABELS, VERSION, Stack, unique
from passes import assigned_namespace, drain_namespace, order_summary
from test_install import (  # noqa: F401 (kubernetes_core: a fixture)
    Install, _no_forbidden, _summary, kubernetes_core, remove_install_leftovers)

REPO = Path(__file__).resolve().parents[2]
KORC = ("openstack.k-orc.cloud", "v1alpha1")
ESO = ("external-secrets.io", "v1alpha1")


@pytest.fixture(scope="module")
def install(stack_env, kube, kubernetes_core, tmp_path_factory):  # noqa: F811
    inst = Install(stack_env["KUBECONFIG"], kube, tmp_path_factory.mktemp("lp-accounts"))
    inst.ensure(c5c3_install_mode="deployment")
    yield inst
    try:
        inst.run(c5c3_install_state="absent")
    finally:
        remove_install_leftovers(inst.name, inst.namespace)


@pytest.fixture(scope="module")
def me(install):
    """The controller's account with a real token, after the access sync granted the ControlPlane namespace."""
    install.sync()
    return install.controller()


@pytest.fixture
def tenant(stack, install):
    with assigned_namespace(stack, "lp-tenant") as ns:
        install.own_namespaces.add(ns)
        install.sync()
        yield ns


def api_as(account):
    """A CustomObjectsApi authenticating with the account's real token (for requests kubectl cannot make alone)."""
    from kubernetes import config
    cfg = client.Configuration()
    config.load_kube_config(config_file=account.kubeconfig, client_configuration=cfg)
    return client.CustomObjectsApi(client.ApiClient(cfg))


def rbac_allows(install, verb, resource, namespace):
    """The hole: RBAC alone lets the controller do this, so only the admission policy can refuse it."""
    assert can_i(install.kubeconfig, install.sa_user, verb, resource, namespace), \
        f"RBAC no longer grants {verb} {resource} in {namespace}: the test proves nothing"


def dry(*args):
    return ["create", "--dry-run=server", "-f", "-", *args]


# -- 1. K-ORC Users -----------------------------------------------------------------------------------------------

def _user(order, tenant, user_name="svc-x", name=None, password=None, domain=f"{CP_NAME}-domain-default",
          credentials=f"{CP_NAME}-admin-password-cloud", labels=True):
    base = Stack.base_name(tenant, order)
    meta = {"name": name or f"{base}-user", "namespace": CP_NS}
    if labels:
        meta["labels"] = {"c5c3.io/keystoneuser-name": order, "c5c3.io/keystoneuser-namespace": tenant,
                          "c5c3.io/keystoneuser-cluster": ""}
    return {"apiVersion": "/".join(KORC), "kind": "User", "metadata": meta,
            "spec": {"cloudCredentialsRef": {"secretName": credentials, "cloudName": "admin"},
                     "managementPolicy": "managed",
                     "resource": {"name": user_name, "domainRef": domain,
                                  "passwordRef": password or f"{base}-password-v1"}}}


def _probe(order, tenant, user_name):
    base = Stack.base_name(tenant, order)
    return {"apiVersion": "/".join(KORC), "kind": "User",
            "metadata": {"name": f"{base}-user-probe", "namespace": CP_NS,
                         "labels": {"c5c3.io/keystoneuser-name": order, "c5c3.io/keystoneuser-namespace": tenant,
                                    "c5c3.io/keystoneuser-cluster": ""}},
            "spec": {"cloudCredentialsRef": {"secretName": f"{CP_NAME}-admin-password-cloud", "cloudName": "admin"},
                     "managementPolicy": "unmanaged",
                     "import": {"filter": {"name": user_name, "domainRef": f"{CP_NAME}-domain-default"}}}}


PLATFORM = "never manages or probes a platform account"
NOT_KORC_OURS = "may write only K-ORC Users labelled"
FOREIGN_USER = "may change or delete only the K-ORC Users of its orders"


@pytest.mark.parametrize("spelling", ["admin", "Admin", "ADMIN", "ádmin", " admin", "admin\u00a0", "ÅDMİN", "nova",
                                      "Nóva", "neutron-nova", "hypervisor-operator", "GLANCE"])
def test_a_managed_korc_user_never_takes_a_platform_accounts_name(install, me, spelling):
    """K-ORC adopts an existing Keystone user of the same name and domain (and deletes it with the object): a
    managed User named like the admin or a service account - as Keystone compares names - is refused."""
    rbac_allows(install, "create", "users.openstack.k-orc.cloud", CP_NS)
    order = unique("lp-korc")
    me.denied(*dry(), body=_user(order, "lp-t", spelling), says=PLATFORM)
    me.denied(*dry(), body=_probe(order, "lp-t", spelling), says=PLATFORM)


def test_korc_users_only_of_the_controllers_orders(install, me, stack):
    rbac_allows(install, "create", "users.openstack.k-orc.cloud", CP_NS)
    rbac_allows(install, "delete", "users.openstack.k-orc.cloud", CP_NS)
    order, tenant = unique("lp-korc"), "lp-t"
    base = Stack.base_name(tenant, order)
    # what the pass writes: admitted
    me.allowed(*dry(), body=_user(order, tenant, "svc-ordinary"))
    me.allowed(*dry(), body=_probe(order, tenant, "svc-ordinary"))
    # without the order's labels, or not named after it
    me.denied(*dry(), body=_user(order, tenant, labels=False), says=NOT_KORC_OURS)
    me.denied(*dry(), body=_user(order, tenant, name="platform-user"), says=NOT_KORC_OURS)
    me.denied(*dry(), body=_user(order, tenant, name=f"{unique('other')}-0123abcd-user-user"), says=NOT_KORC_OURS)
    # another order's (or a platform) Secret as the password, the probe's name for a managed User
    me.denied(*dry(), body=_user(order, tenant, password=f"{Stack.base_name(tenant, 'other')}-password-v1"),
              says="with the password Secret of its own order")
    me.denied(*dry(), body=_user(order, tenant, password=f"{CP_NAME}-admin-password-cloud"),
              says="with the password Secret of its own order")
    me.denied(*dry(), body=_user(order, tenant, name=f"{base}-user-probe"), says="with the password Secret")
    # another domain, or credentials that are not a ControlPlane's admin credentials
    me.denied(*dry(), body=_user(order, tenant, domain="service-domain"), says="only in the admin domain")
    me.denied(*dry(), body=_user(order, tenant, credentials="my-own-cloud"), says="only in the admin domain")
    # an update or a delete of a User that is not an order's: the same ownership
    foreign = unique("lp-platform-user")
    stack.co.create_namespaced_custom_object(*KORC, CP_NS, "users", {
        "apiVersion": "/".join(KORC), "kind": "User", "metadata": {"name": foreign, "namespace": CP_NS},
        "spec": {"cloudCredentialsRef": {"secretName": f"{CP_NAME}-admin-password-cloud", "cloudName": "admin"},
                 "managementPolicy": "unmanaged", "import": {"filter": {"name": foreign}}}})
    try:
        me.denied("label", "user.openstack.k-orc.cloud", foreign, "-n", CP_NS,
                  f"c5c3.io/keystoneuser-name={order}", "c5c3.io/keystoneuser-namespace=x",
                  "c5c3.io/keystoneuser-cluster=", says=FOREIGN_USER)
        with pytest.raises(ApiException) as refused:  # the status K-ORC trusts: which Keystone user it is
            api_as(me).patch_namespaced_custom_object_status(*KORC, CP_NS, "users", foreign, {
                "status": {"id": "00000000-0000-0000-0000-000000000000"}})
        assert refused.value.status == 403 and FOREIGN_USER in refused.value.body, refused.value.body
        me.denied("delete", "user.openstack.k-orc.cloud", foreign, "-n", CP_NS, says=FOREIGN_USER)
    finally:
        stack.co.delete_namespaced_custom_object(*KORC, CP_NS, "users", foreign)


# -- 1. PushSecrets ------------------------------------------------------------------------------------------------

def _push(name, labels, remote_key, source, store_kind="SecretStore", extra=None):
    spec = {"deletionPolicy": "None", "secretStoreRefs": [{"name": "openbao-tenant-store", "kind": store_kind}],
            "selector": {"secret": {"name": source}}, "data": [{"match": {"remoteRef": {"remoteKey": remote_key}}}]}
    spec.update(extra or {})
    return {"apiVersion": "/".join(ESO), "kind": "PushSecret",
            "metadata": {"name": name, "namespace": CP_NS, "labels": labels}, "spec": spec}


def _ku_labels(order, tenant, cluster=""):
    return {"c5c3.io/keystoneuser-name": order, "c5c3.io/keystoneuser-namespace": tenant,
            "c5c3.io/keystoneuser-cluster": cluster}


ELSEWHERE = "may push only to the OpenBao path its labels and the layout imply"


def test_a_pushsecret_pushes_only_its_own_source_to_its_own_path(install, me, stack):
    """A compromised controller cannot point a push at another order's backup (or anywhere else in OpenBao), push
    another Secret (the admin clouds.yaml), or push through a ClusterSecretStore."""
    rbac_allows(install, "create", "pushsecrets.external-secrets.io", CP_NS)
    rbac_allows(install, "patch", "pushsecrets.external-secrets.io", CP_NS)
    order, victim, tenant = unique("lp-push"), unique("lp-victim"), "lp-t"
    base, victim_base = Stack.base_name(tenant, order), Stack.base_name(tenant, victim)
    path = stack.backup_path(tenant, order)
    labels = _ku_labels(order, tenant)
    name, source = f"{base}-backup", f"{base}-source"
    me.allowed(*dry(), body=_push(name, labels, path, source))
    for where in (stack.backup_path(tenant, victim),                       # another order's backup
                  f"openstack/keystone/other-namespace/{base}/service-accounts/credentials",  # another namespace
                  "openstack/keystone", f"{path}/../../../admin", "platform/root-token"):
        me.denied(*dry(), body=_push(name, labels, where, source), says=ELSEWHERE)
    me.denied(*dry(), body=_push(name, labels, path, f"{CP_NAME}-admin-password-cloud"), says="only the source Secret")
    me.denied(*dry(), body=_push(name, labels, path, f"{victim_base}-source"), says="only the source Secret")
    me.denied(*dry(), body=_push(name, labels, path, source, extra={"template": {"data": {"x": "{{ .password }}"}}}),
              says="only the source Secret")
    me.denied(*dry(), body=_push(name, labels, path, source, store_kind="ClusterSecretStore"),
              says="only through a SecretStore of the namespace")
    # the object-storage kinds' layouts
    bc = {"c5c3.io/bucketcredential-name": "b", "c5c3.io/bucketcredential-namespace": tenant,
          "c5c3.io/bucketcredential-cluster": ""}
    me.allowed(*dry(), body=_push("b-0123abcd-bucket-backup", bc, f"objectstorage/{CP_NS}/b-0123abcd-bucket/credentials",
                                  "b-0123abcd-bucket-source"))
    me.denied(*dry(), body=_push("b-0123abcd-bucket-backup", bc, f"objectstorage/{CP_NS}/other-bucket/credentials",
                                 "b-0123abcd-bucket-source"), says=ELSEWHERE)
    account = {"c5c3.io/objectstoreaccount-name": "store-0123abcd"}
    me.allowed(*dry(), body=_push("store-0123abcd-root-key-backup", account,
                                  f"objectstorage/{CP_NS}/store-0123abcd/root-key", "store-0123abcd-root-key"))
    me.denied(*dry(), body=_push("store-0123abcd-root-key-backup", account,
                                 f"objectstorage/{CP_NS}/store-99999999/root-key", "store-0123abcd-root-key"),
              says=ELSEWHERE)
    me.denied(*dry(), body=_push("my-backup", {}, path, source), says="may write only PushSecrets labelled")

    # an existing PushSecret of the controller cannot be re-pointed; deleting it is its own business
    me.allowed("create", "-f", "-", body=_push(name, labels, path, source))
    try:
        me.denied("patch", "pushsecret", name, "-n", CP_NS, "--type=json", "-p", json.dumps([
            {"op": "replace", "path": "/spec/data/0/match/remoteRef/remoteKey",
             "value": stack.backup_path(tenant, victim)}]), says=ELSEWHERE)
        me.denied("label", "pushsecret", name, "-n", CP_NS, "--overwrite", f"c5c3.io/keystoneuser-name={victim}",
                  says="may write only PushSecrets labelled")
    finally:
        me.allowed("delete", "pushsecret", name, "-n", CP_NS)
    # somebody else's PushSecret: not changed, not deleted
    foreign = unique("lp-foreign-push")
    stack.co.create_namespaced_custom_object(*ESO, CP_NS, "pushsecrets",
                                             _push(foreign, {}, "platform/elsewhere", "no-such-secret"))
    try:
        me.denied("delete", "pushsecret", foreign, "-n", CP_NS, says="only the PushSecrets of its orders")
        me.denied("label", "pushsecret", foreign, "-n", CP_NS, f"c5c3.io/objectstoreaccount-name={foreign}",
                  says="only the PushSecrets of its orders")
    finally:
        stack.co.delete_namespaced_custom_object(*ESO, CP_NS, "pushsecrets", foreign)


# -- 1. ObjectStoreAccounts ----------------------------------------------------------------------------------------

def _account(name, store, tenant, annotations=None, **spec):
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ObjectStoreAccount",
            "metadata": {"name": name, "namespace": CP_NS, "labels": {"c5c3.io/objectstore-name": store}},
            "spec": dict({"objectStoreRef": {"name": store}, "tenant": {"namespace": tenant, "cluster": ""}}, **spec)}
    if annotations is not None:
        body["metadata"]["annotations"] = annotations
    return body


def test_objectstoreaccounts_only_as_the_pass_makes_them(install, me, stack):
    """migrate, rootKeyRotation and legacyUser are the platform's decisions: a compromised controller can neither
    create an account adopting somebody's RGW user nor migrate or rotate one; it binds a tenant uid once."""
    rbac_allows(install, "create", "objectstoreaccounts.c5c3.io", CP_NS)
    rbac_allows(install, "patch", "objectstoreaccounts.c5c3.io", CP_NS)
    store, tenant = unique("lp-nostore"), "lp-t"
    name = f"{store}-0123abcd"
    ours = {"c5c3.io/created-by": "c5c3-orders"}
    new_account = "may create only a new account for a tenant as the pass makes it"
    me.allowed(*dry(), body=_account(name, store, tenant, ours, migrate=False, rootKeyRotation=1))
    me.allowed(*dry(), body=_account(name, store, tenant, ours, legacyUser="c5c3-rgw01234567890123456-shared"))
    me.denied(*dry(), body=_account(name, store, tenant, ours, legacyUser="someone-elses-user"), says=new_account)
    me.denied(*dry(), body=_account(name, store, tenant, ours, legacyUser="c5c3-rgw01234567890123456-shared",
                                    migrate=True), says=new_account)
    me.denied(*dry(), body=_account(name, store, tenant, ours, rootKeyRotation=7), says=new_account)
    me.denied(*dry(), body=_account(name, store, tenant, {}), says=new_account)
    me.denied(*dry(), body=_account("platform-account", store, tenant, ours), says=new_account)

    # the platform's account: the controller binds its tenant's uid once and changes nothing else
    platform = f"{store}-aaaabbbb"
    stack.co.create_namespaced_custom_object(GROUP, VERSION, CP_NS, "objectstoreaccounts",
                                             _account(platform, store, tenant, legacyUser="legacy-user"))
    try:
        uid, other = str(uuid.uuid4()), str(uuid.uuid4())
        nothing_else = "changes nothing of an ObjectStoreAccount but binding it"
        me.denied("patch", "objectstoreaccount", platform, "-n", CP_NS, "--type=merge", "-p",
                  '{"spec": {"migrate": true}}', says=nothing_else)
        me.denied("patch", "objectstoreaccount", platform, "-n", CP_NS, "--type=merge", "-p",
                  '{"spec": {"rootKeyRotation": 9}}', says=nothing_else)
        me.denied("annotate", "objectstoreaccount", platform, "-n", CP_NS, "c5c3.io/created-by=c5c3-orders",
                  says="never changes who made an ObjectStoreAccount")
        me.allowed("patch", "objectstoreaccount", platform, "-n", CP_NS, "--type=merge", "-p",
                   json.dumps({"spec": {"tenant": {"namespaceUID": uid}}}))
        me.denied("patch", "objectstoreaccount", platform, "-n", CP_NS, "--type=merge", "-p",
                  json.dumps({"spec": {"tenant": {"namespaceUID": other}}}), says=nothing_else)
        me.denied("delete", "objectstoreaccount", platform, "-n", CP_NS)  # RBAC: never deleted
    finally:
        stack.co.delete_namespaced_custom_object(GROUP, VERSION, CP_NS, "objectstoreaccounts", platform)


# -- 1. Secrets and orders ---------------------------------------------------------------------------------------

def _secret(namespace, name, labels, kind="Opaque"):
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace,
                                                               "labels": labels},
            "type": kind, "stringData": {"k": "v"}}


LAYOUT = "may write only Secrets named as their labels imply"


def test_secrets_only_named_as_their_labels_imply(install, me, stack, tenant):
    """Labels alone no longer make a Secret the controller's: it cannot squat a platform Secret's name in the
    ControlPlane namespace or a tenant's name beside an order, nor re-label one of its Secrets to another owner."""
    rbac_allows(install, "create", "secrets", CP_NS)
    rbac_allows(install, "create", "secrets", tenant)
    order = unique("lp-sec")
    child = _ku_labels(order, tenant)
    base = Stack.base_name(tenant, order)
    for name in (f"{CP_NAME}-admin-password-cloud", "openbao-tenant-token", f"{order}-credentials",
                 f"{base}-password-v01", f"{base}-backup", f"{unique('x')}-0123abcd-user-source"):
        me.denied(*dry(), body=_secret(CP_NS, name, child), says=LAYOUT)
    for name in (f"{base}-source", f"{base}-password-v1", f"{base}-password-v12"):
        me.allowed(*dry(), body=_secret(CP_NS, name, child))
    delivered = {"c5c3.io/keystoneuser-name": order, "c5c3.io/keystoneuser-namespace": tenant}
    me.allowed(*dry(), body=_secret(tenant, f"{order}-credentials", delivered))
    me.denied(*dry(), body=_secret(tenant, "app-config", delivered), says=LAYOUT)
    me.denied(*dry(), body=_secret(tenant, f"{order}-credentials", dict(delivered, **{
        "c5c3.io/keystoneuser-namespace": "elsewhere"})), says=LAYOUT)
    # object storage
    bucket = {"c5c3.io/bucketcredential-name": "b", "c5c3.io/bucketcredential-namespace": tenant,
              "c5c3.io/bucketcredential-cluster": ""}
    me.allowed(*dry(), body=_secret(CP_NS, "b-0123abcd-bucket-slot2-v3", bucket))
    me.denied(*dry(), body=_secret(CP_NS, "b-0123abcd-bucket-slot3-v1", bucket), says=LAYOUT)
    me.allowed(*dry(), body=_secret(CP_NS, "acc-1-root-key", {"c5c3.io/objectstoreaccount-name": "acc-1"}))
    me.denied(*dry(), body=_secret(CP_NS, "rgw-admin", {"c5c3.io/objectstoreaccount-name": "acc-1"}), says=LAYOUT)

    # a Secret carrying the labels under a name that is not the collection's: not changed, not deleted
    squatter = unique("lp-platform")
    stack.core.create_namespaced_secret(CP_NS, _secret(CP_NS, squatter, child))
    try:
        me.denied("patch", "secret", squatter, "-n", CP_NS, "--type=merge", "-p", '{"stringData": {"k": "w"}}',
                  says="may change or delete only Secrets that already carry")
        me.denied("delete", "secret", squatter, "-n", CP_NS, says="may change or delete only Secrets that already")
    finally:
        stack.core.delete_namespaced_secret(squatter, CP_NS)
    # a delivered Secret whose labels the tenant edited: the order's owner reference keeps it the collection's, and
    # the repair restores the labels
    stack.create_order(tenant, order)
    try:
        uid = stack.order(tenant, order)["metadata"]["uid"]
        tampered = _secret(tenant, f"{order}-credentials", dict(delivered, **{"c5c3.io/keystoneuser-namespace": "x"}))
        tampered["metadata"]["ownerReferences"] = [{"apiVersion": f"{GROUP}/{VERSION}", "kind": "KeystoneUser",
                                                    "name": order, "uid": uid, "controller": True}]
        stack.core.create_namespaced_secret(tenant, tampered)
        me.allowed("label", "secret", f"{order}-credentials", "-n", tenant, "--overwrite",
                   f"c5c3.io/keystoneuser-namespace={tenant}")
    finally:
        stack.delete_order(tenant, order)  # the garbage collector takes the Secret
    # its own Secret: the owner labels stay
    mine = f"{base}-source"
    me.allowed("create", "-f", "-", body=_secret(CP_NS, mine, child))
    try:
        me.denied("label", "secret", mine, "-n", CP_NS, "--overwrite", f"c5c3.io/keystoneuser-namespace={order}",
                  says="may not change or remove the owner labels")
        me.allowed("patch", "secret", mine, "-n", CP_NS, "--type=merge", "-p", '{"stringData": {"k": "w"}}')
    finally:
        me.allowed("delete", "secret", mine, "-n", CP_NS)


def test_orders_only_their_finalizer_and_scope_label(install, me, stack, tenant):
    rbac_allows(install, "patch", "keystoneusers.c5c3.io", tenant)
    name = unique("lp-order")
    stack.create_order(tenant, name, userName="svc-original")
    try:
        me.denied("patch", "keystoneuser", name, "-n", tenant, "--type=merge", "-p",
                  '{"spec": {"passwordGeneration": 5}}', says="never changes what an order asks for")
        me.denied("label", "keystoneuser", name, "-n", tenant, "team=x", says="changes no label of an order")
        me.allowed("label", "keystoneuser", name, "-n", tenant, "c5c3.io/credential-scope=Bucket")
        me.allowed("patch", "keystoneuser", name, "-n", tenant, "--type=merge", "-p",
                   '{"metadata": {"finalizers": ["c5c3.io/keystoneuser-teardown"]}}')
        me.allowed("patch", "keystoneuser", name, "-n", tenant, "--type=merge", "-p",
                   '{"metadata": {"finalizers": null}}')
        assert stack.order(tenant, name)["spec"]["userName"] == "svc-original"
    finally:
        stack.patch_order(tenant, name, {"metadata": {"finalizers": None}})
        stack.delete_order(tenant, name)


def test_a_bucket_credential_as_the_service_account_provisions_and_tears_down(install, stack_env, kube, stack):
    """The legitimate object-storage writes still pass: the account (created by the pass, uid bound), its root key
    and backup, the bucket's key Secrets, PushSecret and delivered Secret, the order's finalizer, scope label and
    status - every pass as the account, none Forbidden."""
    from rgwenv import require
    storage = objectstores.ObjectStorage(kube, require(stack_env))
    storage.ensure_store()
    install.sync()
    with objectstores.tenant_namespace(stack, storage, "lp-os") as ns:
        install.own_namespaces.add(ns)
        install.sync()
        who = dict(impersonate_user=install.sa_user, impersonate_groups=install.sa_groups, namespaces=[ns])
        storage.create_credential(ns, "data", f"{ns}-data")
        objectstores.reconcile_until(objectstores.converged("BucketCredential", ns, "data"), each=_no_forbidden,
                                     what="the credential to be delivered as the service account", **who)
        assert storage.delivered(ns, "data") is not None
        account = storage.account_of(ns)
        assert account["metadata"]["annotations"]["c5c3.io/created-by"] == "c5c3-orders"
        storage.delete("BucketCredential", ns, "data")
        objectstores.reconcile_until(lambda r: storage.get("BucketCredential", ns, "data") is None, each=_no_forbidden,
                                     what="the teardown as the service account", **who)


# -- 2. grants by allowlist ----------------------------------------------------------------------------------------

def test_a_controlplane_assigning_an_unmarked_namespace_grants_nothing(install, stack):
    """The hole: any namespace a ControlPlane assigns (openbao, argocd, ...) used to be granted Secret verbs unless
    it started with kube-. Now only a namespace the platform marked is; the mark can come and go."""
    platform = unique("lp-platform")
    stack.core.create_namespace({"metadata": {"name": platform}})  # like openbao: nobody marked it for tenants
    install.own_namespaces.add(platform)
    stack.assign(platform)
    try:
        plan = _summary(install.sync())["management"]
        assert f"tenant:{platform}" in plan["unmarked"], plan
        assert f"tenant:{platform}" not in plan["granted"], plan
        assert not can_i(install.kubeconfig, install.sa_user, "get", "secrets", platform)
        assert not can_i(install.kubeconfig, install.sa_user, "create", "secrets", platform)

        stack.core.patch_namespace(platform, {"metadata": {"labels": TENANT_LABELS}})  # the platform marks it
        plan = _summary(install.sync())["management"]
        assert f"tenant:{platform}" in plan["granted"], plan
        assert can_i(install.kubeconfig, install.sa_user, "get", "secrets", platform)

        stack.core.patch_namespace(platform, {"metadata": {"labels": {"c5c3.io/tenant": None}}})  # and unmarks it
        plan = _summary(install.sync())["management"]
        assert f"{platform}/{install.name}-tenant" in plan["revoked"] and f"tenant:{platform}" in plan["unmarked"]
        assert not can_i(install.kubeconfig, install.sa_user, "get", "secrets", platform)
    finally:
        stack.withdraw(platform)
        stack.core.delete_namespace(platform)


def _tenant_binding(install, namespace):
    """The RoleBinding the access sync makes to grant the install's controller ``<name>-tenant`` in ``namespace``."""
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": f"{install.name}-tenant", "namespace": namespace,
                         "labels": {"app.kubernetes.io/managed-by": "c5c3.orders.namespace_access",
                                    "app.kubernetes.io/instance": install.name, "c5c3.io/grant": "tenant"}},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{install.name}-tenant"},
            "subjects": [{"kind": "ServiceAccount", "name": install.name, "namespace": install.namespace}]}


def test_even_an_access_sync_run_without_the_allowlist_cannot_grant_in_an_unmarked_namespace(install, stack):
    """Defence in depth: the access-sync identity's admission policy checks the mark too, so a sync run with the
    selector emptied (a mistake, or a tampered CronJob) fails instead of granting."""
    platform = unique("lp-argocd")
    stack.core.create_namespace({"metadata": {"name": platform}})
    stack.assign(platform)
    try:
        vars_ = install.cronjob_vars()
        vars_["c5c3_namespace_access_tenant_namespace_selector"] = {}
        from test_install import playbook
        with pytest.raises(AssertionError) as refused:
            playbook("access.yml", dict(vars_, c5c3_namespace_access_target_clusters=[],
                                        c5c3_namespace_access_target_clusters_dir=""),
                     install.access_sync().kubeconfig)
        assert "the access sync grants only in namespaces the platform marked for it" in str(refused.value)
        assert f"{platform} is not marked" in str(refused.value)
        assert not can_i(install.kubeconfig, install.sa_user, "get", "secrets", platform)
        sync = install.access_sync()
        binding = _tenant_binding(install, platform)
        sync.denied("create", "-f", "-", body=binding, says=f"{platform} is not marked")
        binding["metadata"]["name"] = binding["roleRef"]["name"] = f"{install.name}-controlplane"
        sync.denied("create", "-f", "-", body=binding, says=f"{platform} is not marked")
    finally:
        stack.withdraw(platform)
        stack.core.delete_namespace(platform)
        install.sync()


# One cluster's writes of the access sync (roles/namespace_access/tasks/write.yml) with a plan made beforehand: the
# namespace changes between the plan and the write, as it can between a real run's read and its write.
WRITE_ONLY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.set_fact:
        c5c3_namespace_access_errors: []
    - ansible.builtin.include_role:
        name: c5c3.orders.namespace_access
        tasks_from: write.yml
    - ansible.builtin.debug:
        msg: "write errors={{ c5c3_namespace_access_errors | length }}: {{ c5c3_namespace_access_errors | join(' | ') }}"
"""


def _write_errors(install, tmp_path, binding, **extra):
    """How many errors the access sync's write step records (and their text) for a plan that grants ``binding``, as the access-sync
    account (its admission policy is the real one)."""
    from test_install import playbook
    book = tmp_path / "write-only.yml"
    book.write_text(WRITE_ONLY)
    play = playbook(str(book), dict(install.cronjob_vars(), **extra,
                                    c5c3_namespace_access_plan={"ok": True, "apply": [binding], "delete": []},
                                    c5c3_namespace_access_cluster={"label": "management"}),
                    install.access_sync().kubeconfig)
    (line,) = re.findall(r"write errors=(\d+): (.*)", play.output)
    return int(line[0]), line[1], play


def test_a_grant_refused_because_the_mark_went_meanwhile_is_no_failure_of_the_sync(install, stack, tmp_path):
    """Level-triggered: the sync planned a grant while the namespace carried the mark, and the platform withdrew the
    mark before the write. The access-sync admission policy refuses the grant; the namespace, read again, explains the
    refusal, so the run does not fail (its next read reports the namespace unmarked). The same refusal in a namespace
    the sync's own selector still matches is an error: the selector and the policy disagree."""
    platform = unique("lp-unmarked")
    stack.core.create_namespace({"metadata": {"name": platform, "labels": {"c5c3.io/sync-says": "tenant"}}})
    binding = _tenant_binding(install, platform)
    try:
        count, errors, play = _write_errors(install, tmp_path, binding)
        assert count == 0, errors
        assert "Grant one by one after a namespace changed under the batch" in play.output
        assert "Read the namespaces again after a grant was refused as not marked" in play.output
        assert not can_i(install.kubeconfig, install.sa_user, "get", "secrets", platform)

        count, errors, _ = _write_errors(install, tmp_path, binding,
                                         c5c3_namespace_access_tenant_namespace_selector={"c5c3.io/sync-says": "tenant"})
        assert count == 1 and errors.startswith("management: granting failed ("), errors
        assert f"{platform} is not marked" in errors, errors
        assert not can_i(install.kubeconfig, install.sa_user, "get", "secrets", platform)
    finally:
        stack.core.delete_namespace(platform)


def test_the_controller_writes_nothing_in_an_unmarked_namespace_even_with_a_grant(install, me, stack):
    """A grant made by hand (or left over) in an unmarked namespace still admits no write: the controller's
    policies check the mark of the namespace they write in."""
    platform = unique("lp-vault")
    stack.core.create_namespace({"metadata": {"name": platform}})
    rbac = client.RbacAuthorizationV1Api(stack.core.api_client)
    rbac.create_namespaced_role_binding(platform, {
        "metadata": {"name": "by-hand"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                                     "name": f"{install.name}-controlplane"},
        "subjects": [{"kind": "ServiceAccount", "name": install.name, "namespace": install.namespace}]})
    try:
        from kubewait import wait_for
        wait_for(lambda: can_i(install.kubeconfig, install.sa_user, "create", "secrets", platform), timeout=60,
                 interval=0.5, what="the hand-made grant")
        order = unique("o")
        delivered = {"c5c3.io/keystoneuser-name": order, "c5c3.io/keystoneuser-namespace": platform}
        me.denied(*dry(), body=_secret(platform, f"{order}-credentials", delivered), says=f"{platform} is not marked")
        child = _secret(platform, f"{Stack.base_name('t', order)}-source", _ku_labels(order, "t"))
        me.denied(*dry(), body=child, says=f"{platform} is not marked")
        user = _user(order, "t")
        user["metadata"]["namespace"] = platform
        me.denied(*dry(), body=user, says=f"{platform} is not marked")
    finally:
        stack.core.delete_namespace(platform)


def test_an_order_in_an_unmarked_namespace_is_never_delivered(install, me, stack):
    """An order in an assigned but unmarked namespace, reconciled as the account without the allowlist option:
    nothing is delivered there (no grant, no admitted write) and its DeliveryReady condition says why. (Its Keystone
    user is still provisioned in the marked ControlPlane namespace; with the option the order is frozen instead,
    ``test_with_the_allowlist_an_order_in_an_unmarked_namespace_is_frozen_as_the_account``.)"""
    platform = unique("lp-unmarked")
    stack.core.create_namespace({"metadata": {"name": platform}})
    stack.assign(platform)
    name = unique("o")
    try:
        assert f"tenant:{platform}" in _summary(install.sync())["management"]["unmarked"]
        stack.create_order(platform, name)
        who = dict(impersonate_user=install.sa_user, impersonate_groups=install.sa_groups,
                   orders=[f"{platform}/{name}"])
        result = run_pass_until(lambda r: (order_summary(r, platform, name) or {}).get("reasons", {}).get(
            "DeliveryReady") == "DeliveryError", **who)
        summary = order_summary(result, platform, name)
        assert not summary["ready"], summary
        delivery = Stack.condition(stack.order(platform, name), "DeliveryReady")
        assert delivery["status"] == "False" and "forbidden" in delivery["message"].lower() \
            and platform in delivery["message"], delivery
        assert stack.delivered(platform, name) is None
    finally:
        drain_namespace(stack, platform)  # as admin: the teardown of what was made in the ControlPlane namespace
        stack.withdraw(platform)
        stack.core.delete_namespace(platform)


def test_with_the_allowlist_an_order_in_an_unmarked_namespace_is_frozen_as_the_account(install, stack):
    """The same order, reconciled as the account with the allowlist the installed controller passes
    (``tenant_namespace_selector``): frozen with NamespaceNotMarked, nothing provisioned in the ControlPlane
    namespace, and the pass's one Namespace list is allowed (nothing unreadable)."""
    platform = unique("lp-unmarked")
    stack.core.create_namespace({"metadata": {"name": platform}})
    stack.assign(platform)
    name = unique("o")
    try:
        stack.create_order(platform, name)
        who = dict(impersonate_user=install.sa_user, impersonate_groups=install.sa_groups,
                   orders=[f"{platform}/{name}"], tenant_namespace_selector=dict(TENANT_LABELS))
        result = run_pass_until(lambda r: (order_summary(r, platform, name) or {}).get("reasons", {}).get(
            "UserReady") == "NamespaceNotMarked", **who)
        assert result["unreadable"] == [], result["unreadable"]
        assert Stack.condition(stack.order(platform, name), "DeliveryReady")["reason"] == "NamespaceNotMarked"
        assert stack.children(platform, name) == [] and stack.delivered(platform, name) is None
    finally:
        drain_namespace(stack, platform)
        stack.withdraw(platform)
        stack.core.delete_namespace(platform)


def run_pass_until(check, timeout=120, **args):
    from passes import reconcile_until
    return reconcile_until(check, timeout, "the order's delivery to be refused", **args)


# -- 6. metrics and network ----------------------------------------------------------------------------------------

def _controller(install):
    return install.apps.read_namespaced_deployment(f"{install.name}-controller", install.namespace)


def _arg(container, flag):
    """A flag's value on the controller's command line (its ``args`` under the image's entrypoint, or ``command``)."""
    line = list(container.command or []) + list(container.args or [])
    return line[line.index(flag) + 1]


def test_the_metrics_endpoint_binds_where_the_role_says_and_only_the_scraper_may_connect(install):
    networking = client.NetworkingV1Api(install.core.api_client)
    install.ensure(c5c3_install_mode="deployment")
    deployment = _controller(install)
    container = deployment.spec.template.spec.containers[0]
    assert _arg(container, "--metrics-host") == "0.0.0.0"
    assert {e.name: e.value_from.field_ref.field_path for e in container.env if e.value_from
            and e.value_from.field_ref}["POD_IP"] == "status.podIP"
    policy = networking.read_namespaced_network_policy(f"{install.name}-metrics", install.namespace)
    pods = deployment.spec.template.metadata.labels
    assert all(pods.get(k) == v for k, v in policy.spec.pod_selector.match_labels.items()), \
        "the policy selects the controller's Pods"
    assert policy.spec.policy_types == ["Ingress"]
    (rule,) = policy.spec.ingress
    (peer,) = rule._from
    assert peer.namespace_selector.match_labels == {"kubernetes.io/metadata.name": "monitoring"}
    assert peer.pod_selector is None and peer.ip_block is None
    assert [(p.port, p.protocol) for p in rule.ports] == [("metrics", "TCP")]

    install.ensure(c5c3_install_mode="deployment", c5c3_install_metrics_host="$(POD_IP)",
                   c5c3_install_metrics_scraper_namespace_selector={"team": "observability"},
                   c5c3_install_metrics_scraper_pod_selector={"app.kubernetes.io/name": "prometheus"})
    assert _arg(_controller(install).spec.template.spec.containers[0], "--metrics-host") == "$(POD_IP)"
    (peer,) = networking.read_namespaced_network_policy(f"{install.name}-metrics",
                                                        install.namespace).spec.ingress[0]._from
    assert peer.namespace_selector.match_labels == {"team": "observability"}
    assert peer.pod_selector.match_labels == {"app.kubernetes.io/name": "prometheus"}

    install.ensure(c5c3_install_mode="deployment", c5c3_install_metrics_network_policy=False)
    with pytest.raises(ApiException) as gone:
        networking.read_namespaced_network_policy(f"{install.name}-metrics", install.namespace)
    assert gone.value.status == 404
    install.ensure(c5c3_install_mode="deployment")


def test_monitoring_objects_on_a_cluster_without_prometheus_operator_are_refused_clearly(install, kube):
    assert not can_i_served(kube, "servicemonitors"), "the local stack runs no prometheus-operator"
    with pytest.raises(AssertionError, match="need the prometheus-operator CRDs"):
        install.run(c5c3_install_mode="deployment", c5c3_install_service_monitor=True)
    install.current = None
    install.ensure(c5c3_install_mode="deployment")


MONITORING_CRDS = ("servicemonitors", "prometheusrules")


@pytest.fixture
def monitoring_crds(kube):
    """The two prometheus-operator kinds, as stand-in CRDs (unvalidated) unless the cluster has the real ones;
    removed afterwards when the test made them."""
    ext = client.ApiextensionsV1Api(kube)
    made = []
    for plural in MONITORING_CRDS:
        name = f"{plural}.monitoring.coreos.com"
        try:
            ext.read_custom_resource_definition(name)
            continue
        except ApiException as exc:
            if exc.status != 404:
                raise
        kind = {"servicemonitors": "ServiceMonitor", "prometheusrules": "PrometheusRule"}[plural]
        ext.create_custom_resource_definition({
            "metadata": {"name": name},
            "spec": {"group": "monitoring.coreos.com", "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}})
        made.append(name)
    from kubewait import wait_for
    wait_for(lambda: all(can_i_served(kube, p) for p in MONITORING_CRDS), timeout=60, interval=0.5,
             what="the monitoring CRDs to be served")
    yield
    for name in made:
        ext.delete_custom_resource_definition(name)


def can_i_served(kube, plural):
    try:
        client.CustomObjectsApi(kube).list_cluster_custom_object("monitoring.coreos.com", "v1", plural, limit=1)
        return True
    except ApiException:
        return False


def _controller_metric_names():
    """Every family the controller exports (controller/c5c3_orders_controller/metrics.py), as scraped."""
    sys.path.insert(0, str(REPO / "controller"))
    from c5c3_orders_controller.metrics import Metrics
    text = Metrics().render()
    return {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE")} | {
        name for line in text.splitlines() if not line.startswith("#") for name in [line.split("{")[0].split()[0]]}


def test_the_service_monitor_and_the_prometheus_rule_are_optional(install, kube, monitoring_crds):
    co = client.CustomObjectsApi(kube)
    name = f"{install.name}-controller"
    install.ensure(c5c3_install_mode="deployment", c5c3_install_service_monitor=True,
                   c5c3_install_prometheus_rule=True, c5c3_install_monitoring_labels={"release": "prometheus"})
    monitor = co.get_namespaced_custom_object("monitoring.coreos.com", "v1", install.namespace, "servicemonitors",
                                              name)
    service = install.core.read_namespaced_service(f"{install.name}-metrics", install.namespace)
    assert all(service.metadata.labels.get(k) == v for k, v in monitor["spec"]["selector"]["matchLabels"].items())
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [install.namespace]}
    assert [e["port"] for e in monitor["spec"]["endpoints"]] == [service.spec.ports[0].name]
    assert monitor["metadata"]["labels"]["release"] == "prometheus"

    rule = co.get_namespaced_custom_object("monitoring.coreos.com", "v1", install.namespace, "prometheusrules", name)
    alerts = {r["alert"]: r for g in rule["spec"]["groups"] for r in g["rules"]}
    assert set(alerts) == {"C5c3OrdersControllerDown", "C5c3OrdersPassesFailing", "C5c3OrdersNotReady",
                           "C5c3OrdersBackupsNotSynced"}
    exported = _controller_metric_names()
    for alert, body in alerts.items():
        used = set(re.findall(r"\b([a-z_][a-z0-9_]*)\{", body["expr"]))
        ours = {m for m in used if m.startswith("c5c3_orders_controller_")}
        assert ours <= exported, f"{alert} uses metrics the controller does not export: {ours - exported}"
        assert used - ours <= {"up", "pushsecret_status_condition"}, (alert, used)
        assert body["for"] and body["labels"]["severity"] in ("critical", "warning")
        assert f'job="{install.name}-metrics"' in body["expr"] or alert == "C5c3OrdersBackupsNotSynced"

    install.ensure(c5c3_install_mode="deployment")  # switched off: both removed
    for plural in MONITORING_CRDS:
        with pytest.raises(ApiException) as gone:
            co.get_namespaced_custom_object("monitoring.coreos.com", "v1", install.namespace, plural, name)
        assert gone.value.status == 404
