#!/usr/bin/env python3
"""Checks deploy/kubernetes/ or deploy/kubernetes-ha/ offline, as kustomize, an API server
and a kubelet would see it.

0. Rendering: kustomization.yaml's resources (files, and folders with a kustomization of
   their own, such as the HA variant's `../kubernetes`) and its patches (strategic merge:
   `$patch: delete`, or maps merged into the object they name), as `kubectl kustomize`
   does for these fields; any other kustomization field is refused rather than ignored.
   Every manifest of a folder must be listed in its resources or patches.
1. Schema: every object against its kind's definition in k8s-openapi-subset.json (the
   Kubernetes OpenAPI document), strictly: an unknown field is an error, as it is for
   `kubectl apply` (server-side field validation "Strict"); so are a wrong type, a
   missing required field and a value outside an enum. Patches too (required fields
   aside: a patch names only what it changes).
2. The rendered objects as a whole: names are DNS-1123; every object the pod refers to
   (service account, ConfigMap, Secret, volume claim, port name, env's secretKeyRef) exists
   or is one of EXTERNAL; the Services, the Deployment or StatefulSet and the
   PodDisruptionBudget select the pod's labels; bindings name existing roles and accounts;
   the RBAC grants the kubernetes connector's calls; the pod and every container run as
   non-root with a read-only root file system and no privilege escalation; the
   ConfigMap's gpufed.yaml has the same keys as the shipped deploy/config/gpufed.yaml,
   listens on the container port, and keeps files where a volume is mounted; the audit
   log's key (auditKey) is set and not on the state volume; the grace period outlasts
   drainTimeout.
   One replica (a Deployment): replicas 1, Recreate.
   Replicas on a PostgreSQL store (a StatefulSet): 2 or 3 replicas, Parallel, OnDelete, a
   headless Service named by serviceName that publishes not-ready pods, a client Service
   that does not, one replica per node, a PodDisruptionBudget of maxUnavailable 1 that lets
   not-ready standbys be evicted; gpufed's flags exist in `gpufed run`
   (controller/cli/run_command.cc), every $(VAR) they use is in env, --replica is the pod's
   name, --advertise is https://$(POD_NAME).SERVICE.NAMESPACE.svc:PORT, the lease timings
   are ordered, the passfile (PGPASSFILE) is a copy made with mode 0600 and PGPASSWORD is
   not set.

Usage: k8s_manifests.py [--schema FILE] [--config FILE] [--run-source FILE]
                        [--compare-with RENDERED.yaml] DIR
Prints one line per problem ("FILE: KIND/NAME: PATH: message") and exits 1 if there is
any, 0 otherwise. --compare-with also requires the rendering to equal kustomize's own
(`kubectl kustomize DIR`). Needs python3 and python3-yaml only.
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
# The HA variant's gpufed-store (the database's URI, passfile and CA) likewise: its
# README says how to make it.
EXTERNAL = {("Secret", "gpufed", "gpufed-tls"), ("Secret", "gpufed", "gpufed-audit-key"),
            ("Secret", "gpufed", "gpufed-store")}
RUN_SOURCE = os.path.join(ROOT, "controller", "cli", "run_command.cc")

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
    ("io.k8s.api.apps.v1.StatefulSetSpec", "podManagementPolicy"): {"OrderedReady", "Parallel"},
    ("io.k8s.api.apps.v1.StatefulSetUpdateStrategy", "type"): {"RollingUpdate", "OnDelete"},
    ("io.k8s.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy", "whenDeleted"): {"Retain", "Delete"},
    ("io.k8s.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy", "whenScaled"): {"Retain", "Delete"},
    ("io.k8s.api.policy.v1.PodDisruptionBudgetSpec", "unhealthyPodEvictionPolicy"): {"IfHealthyBudget", "AlwaysAllow"},
    ("io.k8s.api.core.v1.ObjectFieldSelector", "fieldPath"):
        {"metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels", "metadata.annotations",
         "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP",
         "status.podIPs"},
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

    def check(self, value, node, path, report, enum=None, partial=False):
        """`partial`: a strategic-merge patch, which names only what it changes, so
        required fields are not required (unknown ones are still errors)."""
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
            for req in [] if partial else node.get("required", []):
                if req not in value:
                    report(path, f"missing required field {req!r}")
            for key, item in value.items():
                sub = f"{path}.{key}" if path else key
                if key == "$patch" and partial:
                    if item not in ("delete", "replace", "merge"):
                        report(sub, f"{item!r} is not one of ['delete', 'merge', 'replace']")
                elif props is not None and key in props:
                    self.check(item, props[key], sub, report, ENUMS.get((name, key)), partial)
                elif "additionalProperties" in node and isinstance(node["additionalProperties"], dict):
                    self.check(item, node["additionalProperties"], sub, report, partial=partial)
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
                self.check(item, node.get("items", {}), f"{path}[{i}]", report, partial=partial)
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


WORKLOADS = ("Deployment", "StatefulSet")


def selects(selector, labels):
    """A Service's selector or a LabelSelector's matchLabels against a pod's labels."""
    return bool(selector) and selector.items() <= labels.items()


def pod_labels(workload):
    return workload["spec"]["template"].get("metadata", {}).get("labels", {})


def check_folder(objects, config_keys, flags, problems):
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

    controllers = [(w, o) for w, o in objects if o["kind"] in WORKLOADS and
                   any(c.get("name") == "gpufed" for c in pod_spec(o).get("containers", []))]
    if len(controllers) > 1:
        problems.add(controllers[1][0], "a second workload runs gpufed (" +
                     ", ".join(f"{o['kind']}/{o['metadata']['name']}" for _, o in controllers) +
                     "): one Deployment, or one StatefulSet of replicas on a shared store")

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
            pods = [p for _, p in objects if p["kind"] in WORKLOADS and p["metadata"].get("namespace") == ns and
                    selects(selector, pod_labels(p))]
            if not pods:
                problems.add(where, f"selector {selector} matches no Deployment's or StatefulSet's pods")
            for port in o.get("spec", {}).get("ports", []):
                target = port.get("targetPort", port.get("port"))
                for p in pods:
                    names = {cp.get("name") for _, c in containers(pod_spec(p)) for cp in c.get("ports", [])}
                    numbers = {cp.get("containerPort") for _, c in containers(pod_spec(p)) for cp in c.get("ports", [])}
                    if target not in names and target not in numbers:
                        problems.add(where, f"targetPort {target!r} is no port of {p['metadata']['name']}'s containers")
        if kind == "PodDisruptionBudget":
            match = o.get("spec", {}).get("selector", {}).get("matchLabels", {})
            if not any(p["kind"] in WORKLOADS and p["metadata"].get("namespace") == ns and selects(match, pod_labels(p))
                       for _, p in objects):
                problems.add(where, f"spec.selector.matchLabels {match} selects no Deployment's or StatefulSet's pods")
        if kind in WORKLOADS:
            check_workload(where, o, exists, config_keys, objects, problems)
        if kind == "StatefulSet":
            check_statefulset(where, o, index, exists, flags, objects, problems)

    check_rbac(objects, problems)


def check_workload(where, o, exists, config_keys, objects, problems):
    ns = o["metadata"]["namespace"]
    spec = o["spec"]
    labels = pod_labels(o)
    match = spec.get("selector", {}).get("matchLabels", {})
    if not match or not match.items() <= labels.items():
        problems.add(where, f"spec.selector.matchLabels {match} does not select the template's labels {labels}")
    if o["kind"] == "Deployment":
        if spec.get("replicas", 1) != 1:
            problems.add(where, "spec.replicas: one controller per state folder (several replicas need --store and "
                                "a StatefulSet: deploy/kubernetes-ha/)")
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
    claims = {c["metadata"]["name"] for c in spec.get("volumeClaimTemplates", []) if "name" in c.get("metadata", {})}
    for v in volumes.values():
        for key, kind, field in (("configMap", "ConfigMap", "name"), ("secret", "Secret", "secretName"),
                                 ("persistentVolumeClaim", "PersistentVolumeClaim", "claimName")):
            if key in v and not exists(kind, ns, v[key].get(field)):
                problems.add(where, f"volume {v['name']}: {kind} {v[key].get(field)!r} does not exist")
    for name in sorted(claims & set(volumes)):
        problems.add(where, f"volumeClaimTemplates {name!r} has the name of a pod volume (the claim would replace it)")
    mounted = set()
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
            if m.get("name") not in volumes and m.get("name") not in claims:
                problems.add(cw, f"volumeMount {m.get('name')!r} names no volume")
            mounted.add(m.get("name"))
        for e in c.get("env", []):
            for key, kind in (("secretKeyRef", "Secret"), ("configMapKeyRef", "ConfigMap")):
                ref = e.get("valueFrom", {}).get(key)
                if ref and not ref.get("optional") and not exists(kind, ns, ref.get("name")):
                    problems.add(cw, f"env {e.get('name')}: {kind} {ref.get('name')!r} does not exist")
        mounts_of[c.get("name")] = c.get("volumeMounts", [])
    for name in sorted(claims - mounted):
        problems.add(where, f"volumeClaimTemplates {name!r} is mounted by no container")
    main = next((c for c in pod.get("containers", []) if c.get("name") == "gpufed"), None)
    if main is None:
        problems.add(where, "no container named gpufed")
        return
    probes = {p: main.get(p, {}).get("httpGet", {}).get("path") for p in ("livenessProbe", "readinessProbe")}
    if probes != {"livenessProbe": "/healthz", "readinessProbe": "/readyz"}:
        problems.add(where, f"gpufed's probes: liveness on /healthz, readiness on /readyz (have {probes})")
    check_config(where, o, main, mounts_of["gpufed"], config_keys, objects, problems)


# ---- 2b. Replicas on a PostgreSQL store (deploy/kubernetes-ha/) -----------------------------

def run_flags(path):
    """`gpufed run`'s options as its source declares them: {flag: takes a value}."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    flags = {}
    for kind, names in re.findall(r'add_(option|flag)\(\s*"([^"]+)"', text):
        for name in names.split(","):
            if name.startswith("--"):
                flags[name] = kind == "option"
    return flags


def parse_args(args, flags, report):
    """gpufed's args as {flag: value}; unknown flags reported."""
    out = {}
    i = 0
    while i < len(args):
        arg = str(args[i])
        i += 1
        if not arg.startswith("-"):
            report(f"args: {arg!r} is not a flag (gpufed run takes no positional arguments)")
            continue
        name, eq, value = arg.partition("=")
        if name not in flags:
            report(f"args: unknown flag {name} (not an option of `gpufed run`: controller/cli/run_command.cc)")
            continue
        if flags[name] and not eq:
            if i >= len(args):
                report(f"args: {name} has no value")
                break
            value = str(args[i])
            i += 1
        out[name] = value
    return out


def copied_by_init(pod, path, mode=None):
    """Whether an init container's command installs a file at `path` (with `mode`)."""
    pattern = r"install\s+-m\s+" + (re.escape(mode) if mode else r"\S+") + r"\s+\S+\s+" + re.escape(path) + r"(\s|$)"
    return any(re.search(pattern, " ".join(map(str, c.get("command", []) + c.get("args", []))))
               for c in pod.get("initContainers", []))


def check_statefulset(where, o, index, exists, flags, objects, problems):
    ns = o["metadata"]["namespace"]
    spec = o["spec"]
    pod = pod_spec(o)
    labels = pod_labels(o)
    replicas = spec.get("replicas", 1)
    if not 2 <= replicas <= 3:
        problems.add(where, f"spec.replicas {replicas}: two or three replicas (deploy/ha/README.md)")
    if spec.get("podManagementPolicy") != "Parallel":
        problems.add(where, "spec.podManagementPolicy: Parallel (standbys are never Ready, and OrderedReady waits for "
                            "each pod to be Ready before it makes the next)")
    if spec.get("updateStrategy", {}).get("type") != "OnDelete":
        problems.add(where, "spec.updateStrategy.type: OnDelete (a rolling update waits for each replaced pod to be "
                            "Ready, and a replaced pod comes back as a standby, never Ready)")
    service_name = spec.get("serviceName")
    headless = index.get(("Service", ns, service_name))
    if headless is None:
        problems.add(where, f"spec.serviceName {service_name!r} names no Service in {ns}")
    else:
        hw = f"Service/{service_name}"
        if headless["spec"].get("clusterIP") != "None":
            problems.add(where, f"{hw} (the serviceName) must be headless (clusterIP: None) to give each pod its name")
        if headless["spec"].get("publishNotReadyAddresses") is not True:
            problems.add(where, f"{hw} (the serviceName) must publish not-ready pods: standbys are never Ready, "
                                "and a new leader is not Ready yet when the others redirect to its name")
        if not selects(headless["spec"].get("selector", {}), labels):
            problems.add(where, f"{hw} (the serviceName) does not select the pods")
    for w, s in objects:
        if s["kind"] == "Service" and s["metadata"].get("namespace") == ns and s["metadata"]["name"] != service_name \
                and selects(s.get("spec", {}).get("selector", {}), labels) and s["spec"].get("publishNotReadyAddresses"):
            problems.add(w, "publishNotReadyAddresses: the clients' Service must route to Ready pods only, that is "
                            "to the leader (standbys answer /readyz 503)")
    terms = pod.get("affinity", {}).get("podAntiAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", [])
    if not any(t.get("topologyKey") == "kubernetes.io/hostname" and
               selects(t.get("labelSelector", {}).get("matchLabels", {}), labels) for t in terms):
        problems.add(where, "spec.template.spec.affinity: a required podAntiAffinity on kubernetes.io/hostname that "
                            "selects these pods (one replica per node)")
    budgets = [b for _, b in objects if b["kind"] == "PodDisruptionBudget" and b["metadata"].get("namespace") == ns
               and selects(b["spec"].get("selector", {}).get("matchLabels", {}), labels)]
    if not budgets:
        problems.add(where, "no PodDisruptionBudget selects the pods")
    for b in budgets:
        bw = f"PodDisruptionBudget/{b['metadata']['name']}"
        if b["spec"].get("maxUnavailable") != 1 or "minAvailable" in b["spec"]:
            problems.add(where, f"{bw}: maxUnavailable: 1 (and no minAvailable)")
        if b["spec"].get("unhealthyPodEvictionPolicy") != "AlwaysAllow":
            problems.add(where, f"{bw}: unhealthyPodEvictionPolicy: AlwaysAllow (standbys are never Ready, so the "
                                "budget counts them unhealthy; without it no pod could be evicted and drains would hang)")

    main = next((c for c in pod.get("containers", []) if c.get("name") == "gpufed"), None)
    if main is None:
        return
    cw = f"{where}: containers[gpufed]"
    if "command" in main:
        problems.add(cw, "command replaces the image's entrypoint (gpufed run --config-file ...): give args only")
    if flags is None:
        problems.add(cw, "cannot check the flags: no controller/cli/run_command.cc (--run-source)")
        return
    args = parse_args(main.get("args", []), flags, lambda m: problems.add(cw, m))
    env = {e.get("name"): e for e in main.get("env", [])}
    for arg in main.get("args", []):
        for var in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", str(arg)):
            if var not in env:
                problems.add(cw, f"args: {arg!r} refers to $({var}), which env does not define (Kubernetes would "
                                 "pass it on unexpanded)")
    for flag in ("--store", "--replica", "--advertise"):
        if flag not in args:
            problems.add(cw, f"args: no {flag} (deploy/ha/README.md)")

    def env_source(value):
        m = re.fullmatch(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", value or "")
        return env.get(m.group(1)) if m else None

    store = args.get("--store")
    if store is not None:
        source = env_source(store)
        if source is None:
            problems.add(cw, "args: --store is to be $(VAR) with VAR from the store Secret (secretKeyRef), not text "
                             "in the manifest")
        elif "secretKeyRef" not in source.get("valueFrom", {}):
            problems.add(cw, f"env {source.get('name')}: the store URI comes from a Secret (secretKeyRef)")
    pod_name_vars = {n for n, e in env.items()
                     if e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.name"}
    replica = args.get("--replica")
    if replica is not None and (env_source(replica) or {}).get("name") not in pod_name_vars:
        problems.add(cw, f"args: --replica {replica!r} is to be $(VAR) with VAR the pod's name (fieldRef "
                         "metadata.name): unique, and stable across restarts")
    advertise = args.get("--advertise")
    if advertise is not None:
        ports = {p.get("containerPort") for p in main.get("ports", [])}
        wanted = [f"https://$({v}).{service_name}.{ns}.svc:{p}" for v in sorted(pod_name_vars) for p in sorted(ports)]
        if advertise not in wanted:
            problems.add(cw, f"args: --advertise {advertise!r} is not the pod's name in the headless Service on a "
                             f"container port ({' or '.join(wanted) or 'no pod-name env, no port'})")
    timings = [duration_seconds(args.get(f, d)) for f, d in
               (("--lease-retry", "2s"), ("--renew-deadline", "10s"), ("--lease-duration", "15s"))]
    if not timings[0] < timings[1] < timings[2]:
        problems.add(cw, "args: --lease-retry < --renew-deadline < --lease-duration (gpufed refuses anything else)")
    if "PGPASSWORD" in env:
        problems.add(cw, "env PGPASSWORD: gpufed refuses it; the password goes in the passfile (PGPASSFILE)")
    mounts = main.get("volumeMounts", [])
    for var, mode in (("PGPASSFILE", "0600"), ("PGSSLROOTCERT", None)):
        path = env.get(var, {}).get("value")
        if path is None:
            if var == "PGPASSFILE":
                problems.add(cw, "env PGPASSFILE: the store's password comes from a passfile, copied from the "
                                 "store Secret with mode 0600 by the init container")
            continue
        if not any(path.startswith(m["mountPath"].rstrip("/") + "/") for m in mounts):
            problems.add(cw, f"env {var} {path} is on no mounted volume")
        if not copied_by_init(pod, path, mode):
            problems.add(cw, f"env {var} {path}: no init container copies it there" +
                         (f" with mode {mode} (libpq ignores a passfile others can read)" if mode else ""))


def duration_seconds(text):
    total = 0
    for amount, unit in re.findall(r"(\d+)(ms|s|m|h|d)", str(text)):
        total += int(amount) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}[unit]
    return total


def check_config(where, deployment, main, mounts, config_keys, objects, problems):
    """`deployment`: the Deployment or StatefulSet whose pod runs gpufed."""
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
        if d["kind"] in WORKLOADS:
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


# ---- 0. Rendering, as kustomize does ------------------------------------------------------

KUSTOMIZATION_FIELDS = {"apiVersion", "kind", "resources", "patches"}


def load_yaml(path, label, problems):
    try:
        with open(path, encoding="utf-8") as f:
            return [d for d in yaml.safe_load_all(f) if d is not None]
    except (OSError, yaml.YAMLError) as e:
        problems.add(label, f"does not load: {e}")
        return []


def identity(doc):
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    return doc.get("apiVersion"), doc.get("kind"), meta.get("namespace"), meta.get("name")


def merge(target, patch):
    """A strategic merge of maps (lists in patches are refused before this)."""
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            merge(target[key], value)
        elif value is None:
            target.pop(key, None)
        else:
            target[key] = value


def has_list(node):
    if isinstance(node, list):
        return True
    return isinstance(node, dict) and any(has_list(v) for v in node.values())


def render(folder, label, schema, problems, seen=()):
    """The objects of the kustomization in `folder`, as [(where, object)]; `label` names
    the folder in messages. Every document is checked against the schema on the way."""
    folder = os.path.realpath(folder)
    if folder in seen:
        problems.add(label, "kustomization cycle")
        return []
    path = os.path.join(folder, "kustomization.yaml")
    if not os.path.exists(path):
        problems.add(label, "no kustomization.yaml (the check renders what `kubectl apply -k` would apply)")
        return []
    docs = load_yaml(path, f"{label}kustomization.yaml", problems)
    kustomization = docs[0] if docs and isinstance(docs[0], dict) else {}
    for key in sorted(set(kustomization) - KUSTOMIZATION_FIELDS):
        problems.add(f"{label}kustomization.yaml", f"{key}: not rendered by this check (it renders resources and "
                                                   "patches only; teach k8s_manifests.py first)")
    objects, listed = [], set()
    for entry in kustomization.get("resources", []):
        target = os.path.normpath(os.path.join(folder, str(entry)))
        if os.path.isdir(target):
            objects += render(target, os.path.join(label, str(entry)) + "/", schema, problems, seen + (folder,))
            continue
        listed.add(os.path.normpath(str(entry)))
        if not os.path.exists(target):
            problems.add(f"{label}kustomization.yaml", f"resources lists {entry}, which is not in {label or '.'}")
            continue
        for i, doc in enumerate(load_yaml(target, f"{label}{entry}", problems)):
            api, kind, _, name = identity(doc)
            where = f"{label}{entry}: {kind}/{name or f'document {i + 1}'}"
            definition = schema.by_kind.get((api, kind))
            if definition is None:
                problems.add(where, f"apiVersion {api!r} kind {kind!r} is not in the schema subset "
                                    "(add it to k8s-openapi-subset.py's ROOTS and regenerate)")
                continue
            schema.check(doc, {"$ref": "#/definitions/" + definition}, "",
                         lambda p, m, w=where: problems.add(f"{w}: {p or '(object)'}", m))
            if name:
                objects.append((where, doc))
    patched = set()
    for entry in kustomization.get("patches", []):
        if not isinstance(entry, dict) or set(entry) != {"path"}:
            problems.add(f"{label}kustomization.yaml", f"patches: {entry!r}: only {{path: FILE}} entries (strategic "
                                                       "merge patches naming their object) are rendered by this check")
            continue
        patched.add(os.path.normpath(str(entry["path"])))
        target = os.path.join(folder, str(entry["path"]))
        if not os.path.exists(target):
            problems.add(f"{label}kustomization.yaml", f"patches lists {entry['path']}, which is not in {label or '.'}")
            continue
        for doc in load_yaml(target, f"{label}{entry['path']}", problems):
            api, kind, ns, name = identity(doc)
            where = f"{label}{entry['path']}: {kind}/{name}"
            definition = schema.by_kind.get((api, kind))
            if definition is None:
                problems.add(where, f"apiVersion {api!r} kind {kind!r} is not in the schema subset")
                continue
            schema.check(doc, {"$ref": "#/definitions/" + definition}, "",
                         lambda p, m, w=where: problems.add(f"{w}: {p or '(object)'}", m), partial=True)
            hits = [i for i, (_, o) in enumerate(objects) if identity(o) == (api, kind, ns, name)]
            if not hits:
                problems.add(where, "the patch names no object of the resources")
                continue
            body = {k: v for k, v in doc.items() if k not in ("$patch", "apiVersion", "kind")}
            if doc.get("$patch") == "delete":
                del objects[hits[0]]
            elif has_list(body):
                problems.add(where, "a list in a patch: kustomize merges lists by key (containers by name, ...), "
                                    "which this check does not model; patch maps only")
            else:
                merge(objects[hits[0]][1], body)
    present = set()
    for base, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not os.path.exists(os.path.join(base, d, "kustomization.yaml"))]
        present |= {os.path.relpath(os.path.join(base, f), folder) for f in files if f.endswith((".yaml", ".yml"))}
    present.discard("kustomization.yaml")
    for f in sorted(present - listed - patched):
        problems.add(f"{label}kustomization.yaml",
                     f"{'patches' if os.path.dirname(f) else 'resources'} does not list {f}")
    return objects


def compare(objects, rendered_path, problems):
    """The rendering above against kustomize's own (`kubectl kustomize DIR`)."""
    theirs = {identity(d)[1:]: d for d in load_yaml(rendered_path, rendered_path, problems)}
    ours = {identity(o)[1:]: o for _, o in objects}
    for key in sorted(set(theirs) ^ set(ours), key=str):
        side = "kustomize's rendering only" if key in theirs else "this check's rendering only"
        problems.add("(rendering)", f"{key[0]} {key[1]}/{key[2]}: in {side}")
    for key in sorted(set(theirs) & set(ours), key=str):
        if json.dumps(theirs[key], sort_keys=True) != json.dumps(ours[key], sort_keys=True):
            problems.add("(rendering)", f"{key[0]} {key[1]}/{key[2]}: differs from kustomize's rendering")


# ---- Driver ------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schema", default=os.path.join(HERE, "k8s-openapi-subset.json"))
    parser.add_argument("--config", default=os.path.join(ROOT, "deploy", "config", "gpufed.yaml"),
                        help="the shipped gpufed.yaml whose keys the ConfigMap must have")
    parser.add_argument("--run-source", default=RUN_SOURCE,
                        help="controller/cli/run_command.cc, whose options the pod's gpufed args must be")
    parser.add_argument("--compare-with", help="kustomize's rendering of DIR (kubectl kustomize DIR > FILE)")
    parser.add_argument("dir")
    args = parser.parse_args()
    schema = Schema(args.schema)
    problems = Problems()
    objects = render(args.dir, "", schema, problems)
    if args.compare_with:
        compare(objects, args.compare_with, problems)
    config_keys = None
    if args.config and os.path.exists(args.config):
        with open(args.config, encoding="utf-8") as f:
            config_keys = set(yaml.safe_load(f))
    flags = run_flags(args.run_source) if args.run_source and os.path.exists(args.run_source) else None
    try:
        check_folder(objects, config_keys, flags, problems)
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        # Only reachable when a schema error above left an object malformed.
        if not problems.lines:
            raise
        problems.add("(folder checks)", f"stopped at a malformed object ({type(e).__name__}: {e})")
    for line in problems.lines:
        print(line)
    if problems.lines:
        print(f"k8s-manifests: {len(problems.lines)} problem(s) in {args.dir}")
        return 1
    print(f"k8s-manifests: {args.dir}: {len(objects)} objects valid ({os.path.basename(args.schema)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
