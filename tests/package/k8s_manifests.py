#!/usr/bin/env python3
"""Checks deploy/kubernetes/ offline, as an API server and a kubelet would see it.

1. Schema: every object against its kind's definition in k8s-openapi-subset.json (the
   Kubernetes OpenAPI document), strictly: an unknown field is an error, as it is for
   `kubectl apply` (server-side field validation "Strict"); so are a wrong type, a
   missing required field and a value outside an enum.
2. The folder as a whole: names are DNS-1123; every object the pod refers to (service
   account, ConfigMap, Secret, volume claim, port name) exists or is one of EXTERNAL;
   the Service and the Deployment select the pod's labels; bindings name existing roles
   and accounts; the RBAC grants the kubernetes connector's calls; the pod and every
   container run as non-root with a read-only root file system and no privilege
   escalation; the ConfigMap's gpufed.yaml has the same keys as the shipped
   deploy/config/gpufed.yaml, listens on the container port, and keeps files where a
   volume is mounted; the audit log's key (auditKey) is set and not on the state volume;
   the grace period outlasts drainTimeout; kustomization.yaml lists
   every manifest.

Usage: k8s_manifests.py [--schema FILE] [--config FILE] DIR
Prints one line per problem ("FILE: KIND/NAME: PATH: message") and exits 1 if there is
any, 0 otherwise. Needs python3 and python3-yaml only.
"""
import argparse
import json
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Objects the manifests refer to but do not contain, on purpose (secret.yaml says why).
EXTERNAL = {("Secret", "gpufed", "gpufed-tls"), ("Secret", "gpufed", "gpufed-audit-key")}

# The calls connectors/kubernetes makes (its README, "What it does"), as
# (apiGroup, resource, verb, namespace or None for cluster-wide). The service account
# must be granted each.
CONNECTOR_CALLS = [
    ("", "nodes", "list", None),
    ("", "pods", "list", None),
    ("", "pods", "list", "gpufed-jobs"),
    ("batch", "jobs", "create", "gpufed-jobs"),
    ("batch", "jobs", "get", "gpufed-jobs"),
    ("batch", "jobs", "list", "gpufed-jobs"),
    ("batch", "jobs", "delete", "gpufed-jobs"),
]
# Verbs the connector never needs: granting them is a finding, not a convenience.
FORBIDDEN_VERBS = {"*", "watch", "update", "patch", "deletecollection", "escalate", "bind", "impersonate"}

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
QUANTITY = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|[KMGTPE]i|[mkMGTPE])?$")
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding"}

# The OpenAPI v2 document states most enums in prose only; these are the values the API
# server accepts for the enum fields of the kinds above (definition, field).
ENUMS = {
    ("io.k8s.api.core.v1.HTTPGetAction", "scheme"): {"HTTP", "HTTPS"},
    ("io.k8s.api.apps.v1.DeploymentStrategy", "type"): {"Recreate", "RollingUpdate"},
    ("io.k8s.api.core.v1.ServiceSpec", "type"): {"ClusterIP", "NodePort", "LoadBalancer", "ExternalName"},
    ("io.k8s.api.core.v1.ServicePort", "protocol"): {"TCP", "UDP", "SCTP"},
    ("io.k8s.api.core.v1.ContainerPort", "protocol"): {"TCP", "UDP", "SCTP"},
    ("io.k8s.api.core.v1.SeccompProfile", "type"): {"RuntimeDefault", "Localhost", "Unconfined"},
    ("io.k8s.api.core.v1.EmptyDirVolumeSource", "medium"): {"", "Memory"},
    ("io.k8s.api.core.v1.PersistentVolumeClaimSpec", "accessModes"):
        {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"},
    ("io.k8s.api.core.v1.Container", "imagePullPolicy"): {"Always", "IfNotPresent", "Never"},
    ("io.k8s.api.core.v1.Container", "restartPolicy"): {"Always"},
    ("io.k8s.api.core.v1.PodSpec", "restartPolicy"): {"Always", "OnFailure", "Never"},
}


class Problems:
    def __init__(self):
        self.lines = []

    def add(self, where, message):
        self.lines.append(f"{where}: {message}")


# ---- 1. The OpenAPI schema ---------------------------------------------------------------

class Schema:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.definitions = json.load(f)["definitions"]
        self.by_kind = {}
        for name, d in self.definitions.items():
            for gvk in d.get("x-kubernetes-group-version-kind", []):
                api = gvk["version"] if not gvk["group"] else f"{gvk['group']}/{gvk['version']}"
                self.by_kind[(api, gvk["kind"])] = name

    def resolve(self, node, name=None):
        while "$ref" in node:
            name = node["$ref"].split("/")[-1]
            node = self.definitions[name]
        return node, name

    def check(self, value, node, path, report, enum=None):
        node, name = self.resolve(node)
        if enum:
            values = value if isinstance(value, list) else [value]
            for v in values:
                if isinstance(v, str) and v not in enum:
                    report(path, f"{v!r} is not one of {sorted(enum)}")
        fmt = node.get("format")
        if fmt == "int-or-string":
            if not (isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))):
                report(path, f"expected an integer or a string, got {type(value).__name__}")
            return
        if node is self.definitions.get("io.k8s.apimachinery.pkg.api.resource.Quantity"):
            text = str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
            if not isinstance(text, str) or not QUANTITY.match(text):
                report(path, f"not a quantity: {value!r}")
            return
        kind = node.get("type")
        if kind is None and "properties" in node:
            kind = "object"
        if kind == "object" or (kind is None and "additionalProperties" in node):
            if not isinstance(value, dict):
                report(path, f"expected an object, got {type(value).__name__}")
                return
            props = node.get("properties")
            for req in node.get("required", []):
                if req not in value:
                    report(path, f"missing required field {req!r}")
            for key, item in value.items():
                sub = f"{path}.{key}" if path else key
                if props is not None and key in props:
                    self.check(item, props[key], sub, report, ENUMS.get((name, key)))
                elif "additionalProperties" in node and isinstance(node["additionalProperties"], dict):
                    self.check(item, node["additionalProperties"], sub, report)
                elif props is not None:
                    close = [p for p in props if p.lower() == key.lower()]
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    report(sub, f"unknown field{hint}")
            return
        if kind == "array":
            if not isinstance(value, list):
                report(path, f"expected a list, got {type(value).__name__}")
                return
            for i, item in enumerate(value):
                self.check(item, node.get("items", {}), f"{path}[{i}]", report)
            return
        if kind == "string":
            if not isinstance(value, str):
                report(path, f"expected a string, got {type(value).__name__} {value!r}")
            elif "enum" in node and value not in node["enum"]:
                report(path, f"{value!r} is not one of {node['enum']}")
            return
        if kind == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                report(path, f"expected an integer, got {type(value).__name__} {value!r}")
            elif fmt == "int32" and not -(2**31) <= value < 2**31:
                report(path, f"{value} is out of int32 range")
            return
        if kind == "number":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                report(path, f"expected a number, got {type(value).__name__}")
            return
        if kind == "boolean":
            if not isinstance(value, bool):
                report(path, f"expected true or false, got {value!r}")
            return
        # No type: an opaque object (RawExtension, JSON); anything goes.


# ---- 2. The folder as a whole --------------------------------------------------------------

def pod_spec(obj):
    return obj.get("spec", {}).get("template", {}).get("spec", {})


def containers(spec):
    return [("initContainers", c) for c in spec.get("initContainers", [])] + \
           [("containers", c) for c in spec.get("containers", [])]


def check_folder(objects, config_keys, problems):
    index = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for _, o in objects}
    exists = lambda kind, ns, name: (kind, ns, name) in index or (kind, ns, name) in EXTERNAL  # noqa: E731

    for where, o in objects:
        meta = o["metadata"]
        name, ns = meta.get("name", ""), meta.get("namespace")
        pattern = DNS1123_SUBDOMAIN if o["kind"] not in ("Namespace", "Service") else DNS1123_LABEL
        if not pattern.match(name) or len(name) > 253:
            problems.add(where, f"metadata.name {name!r} is not a DNS-1123 name")
        if o["kind"] in CLUSTER_SCOPED:
            if ns is not None:
                problems.add(where, "metadata.namespace set on a cluster-scoped kind")
        elif ns is None:
            problems.add(where, "metadata.namespace missing (the objects must not land in whatever namespace is current)")
        elif not exists("Namespace", None, ns):
            problems.add(where, f"namespace {ns!r} is not created by these manifests")

    for where, o in objects:
        kind, ns = o["kind"], o["metadata"].get("namespace")
        if kind in ("RoleBinding", "ClusterRoleBinding"):
            ref = o.get("roleRef", {})
            ref_ns = None if ref.get("kind") == "ClusterRole" else ns
            if not exists(ref.get("kind"), ref_ns, ref.get("name")):
                problems.add(where, f"roleRef {ref.get('kind')}/{ref.get('name')} does not exist")
            for s in o.get("subjects", []):
                if s.get("kind") == "ServiceAccount" and not exists("ServiceAccount", s.get("namespace"), s.get("name")):
                    problems.add(where, f"subject ServiceAccount {s.get('namespace')}/{s.get('name')} does not exist")
        if kind == "Service":
            selector = o.get("spec", {}).get("selector", {})
            pods = [p for _, p in objects if p["kind"] == "Deployment" and p["metadata"].get("namespace") == ns and
                    selector.items() <= p["spec"]["template"]["metadata"].get("labels", {}).items()]
            if not pods:
                problems.add(where, f"selector {selector} matches no Deployment's pods")
            for port in o.get("spec", {}).get("ports", []):
                target = port.get("targetPort", port.get("port"))
                for p in pods:
                    names = {cp.get("name") for _, c in containers(pod_spec(p)) for cp in c.get("ports", [])}
                    numbers = {cp.get("containerPort") for _, c in containers(pod_spec(p)) for cp in c.get("ports", [])}
                    if target not in names and target not in numbers:
                        problems.add(where, f"targetPort {target!r} is no port of {p['metadata']['name']}'s containers")
        if kind == "Deployment":
            check_deployment(where, o, exists, config_keys, objects, problems)

    check_rbac(objects, problems)


def check_deployment(where, o, exists, config_keys, objects, problems):
    ns = o["metadata"]["namespace"]
    spec = o["spec"]
    labels = spec["template"].get("metadata", {}).get("labels", {})
    match = spec.get("selector", {}).get("matchLabels", {})
    if not match or not match.items() <= labels.items():
        problems.add(where, f"spec.selector.matchLabels {match} does not select the template's labels {labels}")
    if spec.get("replicas", 1) != 1:
        problems.add(where, "spec.replicas: one controller per state folder until the HA issue lands")
    if spec.get("strategy", {}).get("type") != "Recreate":
        problems.add(where, "spec.strategy.type: Recreate, so that an update never runs two controllers at once")
    pod = pod_spec(o)
    sa = pod.get("serviceAccountName", "default")
    if not exists("ServiceAccount", ns, sa):
        problems.add(where, f"serviceAccountName {sa!r} does not exist")
    psc = pod.get("securityContext", {})
    if psc.get("runAsNonRoot") is not True or not psc.get("runAsUser"):
        problems.add(where, "pod securityContext: runAsNonRoot: true and a non-zero runAsUser")
    if psc.get("seccompProfile", {}).get("type") not in ("RuntimeDefault", "Localhost"):
        problems.add(where, "pod securityContext.seccompProfile: RuntimeDefault (restricted Pod Security Standard)")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for v in volumes.values():
        for key, kind, field in (("configMap", "ConfigMap", "name"), ("secret", "Secret", "secretName"),
                                 ("persistentVolumeClaim", "PersistentVolumeClaim", "claimName")):
            if key in v and not exists(kind, ns, v[key].get(field)):
                problems.add(where, f"volume {v['name']}: {kind} {v[key].get(field)!r} does not exist")
    mounts_of = {}
    for group, c in containers(pod):
        cw = f"{where}: {group}[{c.get('name')}]"
        sc = c.get("securityContext", {})
        if sc.get("allowPrivilegeEscalation") is not False:
            problems.add(cw, "securityContext.allowPrivilegeEscalation: false")
        if sc.get("readOnlyRootFilesystem") is not True:
            problems.add(cw, "securityContext.readOnlyRootFilesystem: true")
        if "ALL" not in sc.get("capabilities", {}).get("drop", []):
            problems.add(cw, "securityContext.capabilities.drop: [ALL]")
        if sc.get("runAsUser") == 0 or sc.get("privileged"):
            problems.add(cw, "runs as root or privileged")
        if "limits" not in c.get("resources", {}) or "memory" not in c["resources"]["limits"]:
            problems.add(cw, "resources.limits.memory: a container without one can take the node's memory")
        ports = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            port = c.get(probe, {}).get("httpGet", {}).get("port")
            if port is not None and port not in ports and port not in ports.values():
                problems.add(cw, f"{probe}.httpGet.port {port!r} is no port of this container")
        for m in c.get("volumeMounts", []):
            if m.get("name") not in volumes:
                problems.add(cw, f"volumeMount {m.get('name')!r} names no volume")
        mounts_of[c.get("name")] = c.get("volumeMounts", [])
    main = next((c for c in pod.get("containers", []) if c.get("name") == "gpufed"), None)
    if main is None:
        problems.add(where, "no container named gpufed")
        return
    probes = {p: main.get(p, {}).get("httpGet", {}).get("path") for p in ("livenessProbe", "readinessProbe")}
    if probes != {"livenessProbe": "/healthz", "readinessProbe": "/readyz"}:
        problems.add(where, f"gpufed's probes: liveness on /healthz, readiness on /readyz (have {probes})")
    check_config(where, o, main, mounts_of["gpufed"], config_keys, objects, problems)


def duration_seconds(text):
    total = 0
    for amount, unit in re.findall(r"(\d+)(ms|s|m|h|d)", str(text)):
        total += int(amount) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}[unit]
    return total


def check_config(where, deployment, main, mounts, config_keys, objects, problems):
    ns = deployment["metadata"]["namespace"]
    config_mount = next((m for m in mounts if m.get("mountPath") == "/etc/gpufed"), None)
    if config_mount is None:
        problems.add(where, "gpufed: nothing mounted at /etc/gpufed (the image runs --config-file /etc/gpufed/gpufed.yaml)")
        return
    volume = next(v for v in pod_spec(deployment)["volumes"] if v["name"] == config_mount["name"])
    cm_name = volume.get("configMap", {}).get("name")
    cm = next((o for _, o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == cm_name
               and o["metadata"].get("namespace") == ns), None)
    if cm is None or "gpufed.yaml" not in cm.get("data", {}):
        problems.add(where, f"ConfigMap {cm_name!r} has no gpufed.yaml")
        return
    try:
        config = yaml.safe_load(cm["data"]["gpufed.yaml"])
    except yaml.YAMLError as e:
        problems.add(where, f"ConfigMap {cm_name}: gpufed.yaml does not parse: {e}")
        return
    cw = f"{where}: ConfigMap {cm_name} gpufed.yaml"
    if config_keys is not None and set(config) != config_keys:
        missing, extra = sorted(config_keys - set(config)), sorted(set(config) - config_keys)
        problems.add(cw, f"keys differ from deploy/config/gpufed.yaml: missing {missing}, unknown {extra}")
    port = str(config.get("listen", "")).rpartition(":")[2]
    if not port.isdigit() or int(port) not in {p.get("containerPort") for p in main.get("ports", [])}:
        problems.add(cw, f"listen {config.get('listen')!r} is not on a port the container declares")
    host = str(config.get("listen", "")).rpartition(":")[0]
    if host not in ("127.0.0.1", "localhost", "[::1]") and not (config.get("tls") or {}).get("cert") \
            and not config.get("allowPlaintext"):
        problems.add(cw, "listens off loopback without tls (gpufed refuses that without allowPlaintext)")
    paths = [("repository", config.get("repository")), ("state", config.get("state")),
             ("tokens", config.get("tokens")), ("tls.cert", (config.get("tls") or {}).get("cert")),
             ("tls.key", (config.get("tls") or {}).get("key")),
             ("tls.clientCA", (config.get("tls") or {}).get("clientCA")), ("auditKey", config.get("auditKey"))]
    for key, path in paths:
        if not path:
            continue
        under = [m for m in mounts if str(path) == m["mountPath"] or str(path).startswith(m["mountPath"].rstrip("/") + "/")]
        if not under:
            problems.add(cw, f"{key} {path} is on no mounted volume (the root file system is read-only)")
        elif key == "state" and under[0].get("readOnly"):
            problems.add(cw, f"state {path} is on a read-only mount")
    # Whoever can write the state volume must not also hold the key that signs the
    # journal's history: an empty auditKey makes one there.
    state_mount = next((m for m in mounts if str(config.get("state", "")).startswith(m["mountPath"].rstrip("/") + "/")
                        or str(config.get("state", "")) == m["mountPath"]), None)
    audit_key = str(config.get("auditKey") or "")
    if not audit_key:
        problems.add(cw, "auditKey is empty: the controller would make the journal's signing key on the state volume")
    elif state_mount and audit_key.startswith(state_mount["mountPath"].rstrip("/") + "/"):
        problems.add(cw, f"auditKey {audit_key} is on the state volume ({state_mount['mountPath']})")
    grace = pod_spec(deployment).get("terminationGracePeriodSeconds", 30)
    if grace <= duration_seconds(config.get("drainTimeout", "60s")):
        problems.add(where, f"terminationGracePeriodSeconds {grace} must exceed drainTimeout {config.get('drainTimeout')}")


def check_rbac(objects, problems):
    """Every connector call is granted to the gpufed service account, and nothing more."""
    grants = []  # (apiGroup, resource, verb, namespace or None)
    account = None
    for _, d in objects:
        if d["kind"] == "Deployment":
            account = (d["metadata"]["namespace"], pod_spec(d).get("serviceAccountName", "default"))
    for where, b in objects:
        if b["kind"] not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        if not any(s.get("kind") == "ServiceAccount" and (s.get("namespace"), s.get("name")) == account
                   for s in b.get("subjects", [])):
            continue
        ref = b["roleRef"]
        role = next((r for _, r in objects if r["kind"] == ref["kind"] and r["metadata"]["name"] == ref["name"] and
                     (ref["kind"] == "ClusterRole" or r["metadata"].get("namespace") == b["metadata"].get("namespace"))),
                    None)
        if role is None:
            continue
        scope = None if b["kind"] == "ClusterRoleBinding" else b["metadata"]["namespace"]
        for rule in role.get("rules", []):
            for verb in rule.get("verbs", []):
                if verb in FORBIDDEN_VERBS:
                    problems.add(where, f"{ref['kind']} {ref['name']} grants {verb!r}, which the connector never uses")
                for group in rule.get("apiGroups", []):
                    for resource in rule.get("resources", []):
                        grants.append((group, resource, verb, scope))
    for group, resource, verb, ns in CONNECTOR_CALLS:
        ok = any(g == group and r == resource and v == verb and (s is None or s == ns) for g, r, v, s in grants)
        if not ok:
            where = "cluster-wide" if ns is None else f"in namespace {ns}"
            problems.add("rbac", f"the service account {account} may not {verb} {group or 'core'}/{resource} {where}")


# ---- Driver ------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schema", default=os.path.join(HERE, "k8s-openapi-subset.json"))
    parser.add_argument("--config", default=os.path.join(ROOT, "deploy", "config", "gpufed.yaml"),
                        help="the shipped gpufed.yaml whose keys the ConfigMap must have")
    parser.add_argument("dir")
    args = parser.parse_args()
    schema = Schema(args.schema)
    problems = Problems()
    objects = []
    files = sorted(f for f in os.listdir(args.dir) if f.endswith((".yaml", ".yml")))
    kustomization = None
    for name in files:
        path = os.path.join(args.dir, name)
        try:
            with open(path, encoding="utf-8") as f:
                docs = [d for d in yaml.safe_load_all(f) if d is not None]
        except yaml.YAMLError as e:
            problems.add(name, f"does not parse: {e}")
            continue
        if name == "kustomization.yaml":
            kustomization = docs[0] if docs else {}
            continue
        for i, doc in enumerate(docs):
            api, kind = doc.get("apiVersion"), doc.get("kind")
            meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
            where = f"{name}: {kind}/{meta.get('name', f'document {i + 1}')}"
            definition = schema.by_kind.get((api, kind))
            if definition is None:
                problems.add(where, f"apiVersion {api!r} kind {kind!r} is not in the schema subset "
                                    "(add it to k8s-openapi-subset.py's ROOTS and regenerate)")
                continue
            schema.check(doc, {"$ref": "#/definitions/" + definition}, "",
                         lambda p, m, w=where: problems.add(f"{w}: {p or '(object)'}", m))
            if "name" in meta:
                objects.append((where, doc))
    if kustomization is not None:
        listed = set(kustomization.get("resources", []))
        manifests = set(files) - {"kustomization.yaml"}
        for f in sorted(manifests - listed):
            problems.add("kustomization.yaml", f"resources does not list {f}")
        for f in sorted(listed - manifests):
            problems.add("kustomization.yaml", f"resources lists {f}, which is not in {args.dir}")
    config_keys = None
    if args.config and os.path.exists(args.config):
        with open(args.config, encoding="utf-8") as f:
            config_keys = set(yaml.safe_load(f))
    try:
        check_folder(objects, config_keys, problems)
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        # Only reachable when a schema error above left an object malformed.
        if not problems.lines:
            raise
        problems.add("(folder checks)", f"stopped at a malformed object ({type(e).__name__}: {e})")
    for line in problems.lines:
        print(line)
    count = sum(1 for _ in objects)
    if problems.lines:
        print(f"k8s-manifests: {len(problems.lines)} problem(s) in {args.dir}")
        return 1
    print(f"k8s-manifests: {count} objects in {len(files)} files valid ({args.schema and os.path.basename(args.schema)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
