#!/usr/bin/env python3
"""Writes k8s-openapi-subset.json: the definitions that deploy/kubernetes/ and
deploy/kubernetes-ha/ need, out of the Kubernetes OpenAPI v2 document
(api/openapi-spec/swagger.json of a Kubernetes release).

The whole document is 4 MB; the manifests use thirteen kinds, whose definitions and the
ones they reference come to a fraction of that. Descriptions are dropped (the check
needs types and names only); everything else is kept as published, so a refreshed
subset differs only where Kubernetes changed.

Usage: k8s-openapi-subset.py SWAGGER_JSON K8S_VERSION > k8s-openapi-subset.json
"""
import json
import sys

# The kinds deploy/kubernetes/ and deploy/kubernetes-ha/ may contain. Adding a kind here
# (and regenerating) is what lets the check accept it.
ROOTS = [
    "io.k8s.api.core.v1.Namespace",
    "io.k8s.api.core.v1.ServiceAccount",
    "io.k8s.api.core.v1.ConfigMap",
    "io.k8s.api.core.v1.Secret",
    "io.k8s.api.core.v1.Service",
    "io.k8s.api.core.v1.PersistentVolumeClaim",
    "io.k8s.api.apps.v1.Deployment",
    "io.k8s.api.apps.v1.StatefulSet",
    "io.k8s.api.policy.v1.PodDisruptionBudget",
    "io.k8s.api.rbac.v1.Role",
    "io.k8s.api.rbac.v1.RoleBinding",
    "io.k8s.api.rbac.v1.ClusterRole",
    "io.k8s.api.rbac.v1.ClusterRoleBinding",
]
PREFIX = "#/definitions/"


def refs(node):
    """Every definition name that `node` references, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(PREFIX):
                yield value[len(PREFIX):]
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def strip(node):
    """`node` without descriptions (a property that is *named* description stays)."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "properties":
                out[key] = {name: strip(prop) for name, prop in value.items()}
            elif key != "description":
                out[key] = strip(value)
        return out
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        definitions = json.load(f)["definitions"]
    wanted, todo = set(), list(ROOTS)
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        if name not in definitions:
            sys.exit(f"k8s-openapi-subset: {name} is not in {sys.argv[1]}")
        wanted.add(name)
        todo.extend(refs(definitions[name]))
    subset = {
        "info": {
            "source": "Kubernetes OpenAPI v2 (api/openapi-spec/swagger.json), descriptions removed",
            "kubernetes": sys.argv[2],
            "license": "Apache-2.0, The Kubernetes Authors",
            "generator": "tests/package/k8s-openapi-subset.py",
            "roots": ROOTS,
        },
        "definitions": {name: strip(definitions[name]) for name in sorted(wanted)},
    }
    json.dump(subset, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
