#!/usr/bin/env python3
"""schemas/cluster.schema.json's spec.connector must be what the connector providers
publish: its $defs "connector" and "connector-<type>" must equal `gpufed docs
connector-schema` (assembled by connectors::ConnectorRegistry from each provider's
fragment), so a provider's fields and the published schema cannot drift apart.

  connector_schema.py GPUFED REPO_ROOT            compare (exit 1 with a diff on drift)
  connector_schema.py GPUFED REPO_ROOT --update   rewrite those $defs in the file
"""
import difflib
import json
import subprocess
import sys


def is_connector_def(name):
    return name == "connector" or name.startswith("connector-")


def dumps(value, indent=0):
    """JSON as the schema files write it: two-space indent, lists of scalars and short
    undescribed objects without objects in them on one line."""
    pad = "  " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        if "description" not in value and all(not isinstance(v, dict) for v in value.values()):
            inline = ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {dumps(v)}" for k, v in value.items())
            if "\n" not in inline and len(inline) <= 64:
                return "{ " + inline + " }"
        items = [f'{pad}  {json.dumps(k, ensure_ascii=False)}: {dumps(v, indent + 1)}' for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
        items = [f"{pad}  {dumps(v, indent + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


# The order schema files write a schema's keywords in (gpufed prints JSON objects with
# sorted keys); other keys follow in their own order.
KEY_ORDER = ["description", "type", "const", "enum", "$ref", "required", "additionalProperties", "properties",
             "allOf", "if", "then", "else"]


def ordered(value, is_properties=False):
    """`value` with each schema's keywords in KEY_ORDER; property names keep their order."""
    if isinstance(value, list):
        return [ordered(v) for v in value]
    if not isinstance(value, dict):
        return value
    if is_properties:
        return {name: ordered(v) for name, v in value.items()}
    rank = {k: i for i, k in enumerate(KEY_ORDER)}
    keys = sorted(value, key=lambda k: rank.get(k, len(KEY_ORDER)))
    return {k: ordered(value[k], is_properties=(k == "properties")) for k in keys}


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    gpufed, root = sys.argv[1], sys.argv[2]
    update = len(sys.argv) == 4 and sys.argv[3] == "--update"
    path = f"{root}/schemas/cluster.schema.json"
    published = subprocess.run([gpufed, "docs", "connector-schema"], check=True, capture_output=True, text=True)
    wanted = json.loads(published.stdout)
    with open(path, encoding="utf-8") as f:
        schema = json.load(f)
    defs = schema["$defs"]
    current = {name: value for name, value in defs.items() if is_connector_def(name)}
    if update:
        # Keep the other $defs where they are; the connector ones follow in the registry's order.
        kept = {name: value for name, value in defs.items() if not is_connector_def(name)}
        schema["$defs"] = {**kept, **{name: ordered(value) for name, value in wanted.items()}}
        with open(path, "w", encoding="utf-8") as f:
            f.write(dumps(schema) + "\n")
        print(f"wrote {path}")
        return 0
    if current == wanted:
        print(f"{path}: spec.connector matches gpufed docs connector-schema")
        return 0
    diff = difflib.unified_diff(dumps(current).splitlines(), dumps(wanted).splitlines(), "published", "providers",
                                lineterm="")
    print("\n".join(diff))
    print(f"{path}: spec.connector differs from gpufed docs connector-schema;")
    print("regenerate it with: tests/docs/connector_schema.py build/controller/gpufed . --update")
    return 1


if __name__ == "__main__":
    sys.exit(main())
