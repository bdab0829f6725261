#!/usr/bin/env python3
"""Validates audit journal records against their JSON Schemas (draft 2020-12).

    validate_journal.py SCHEMAS_DIR [--kinds-from RECORD_CC] SOURCE...

SCHEMAS_DIR is schemas/audit: one `<kind>.schema.json` per record kind, beside
`record.schema.json` (the envelope every kind refers to). Each SOURCE is an audit folder
(its `journal/*.log` segments are read in order) or a file of record lines (JSON Lines).
Every record is validated against the schema of its kind; a record whose kind has no
schema fails. With --kinds-from, the kinds the controller can write (the `kKinds` table
of controller/audit/record.cc) must be exactly the kinds with a schema and the envelope's
`kind` enum, so a new kind cannot ship without one.

Prints each failure as `SOURCE:LINE: seq N kind K: path: message` and a count per kind;
exit 0 when every record is valid, 1 on a failure, 2 on unusable input. Needs the
`jsonschema` package (Debian: python3-jsonschema, 4.10 or later).
"""
import glob
import json
import os
import re
import sys

try:
    import jsonschema
    from jsonschema import Draft202012Validator
except ImportError:
    sys.stderr.write("validate_journal.py: the Python jsonschema package is required (Debian: python3-jsonschema)\n")
    sys.exit(2)

ENVELOPE = "record.schema.json"


def load_schemas(folder):
    schemas = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.schema.json"))):
        with open(path, encoding="utf-8") as f:
            schema = json.load(f)
        Draft202012Validator.check_schema(schema)
        schemas[os.path.basename(path)] = schema
    if ENVELOPE not in schemas:
        raise SystemExit(f"validate_journal.py: no {ENVELOPE} in {folder}")
    return schemas


def make_validators(schemas):
    """One validator per kind; `$ref`s between the files resolve to the files themselves."""
    by_id = {s["$id"]: s for s in schemas.values()}
    validators = {}
    try:  # jsonschema >= 4.18 resolves through `referencing`
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        registry = Registry().with_resources(
            (sid, Resource.from_contents(s, default_specification=DRAFT202012)) for sid, s in by_id.items())
        for name, schema in schemas.items():
            validators[name] = Draft202012Validator(schema, registry=registry)
    except ImportError:  # Debian 12's 4.10
        for name, schema in schemas.items():
            resolver = jsonschema.RefResolver(schema["$id"], schema, store=dict(by_id))
            validators[name] = Draft202012Validator(schema, resolver=resolver)
    return validators


def code_kinds(record_cc):
    """The kind names controller/audit/record.cc can write (its kKinds table)."""
    with open(record_cc, encoding="utf-8") as f:
        text = f.read()
    kinds = re.findall(r'\{RecordKind::k[A-Za-z]+, "([a-z-]+)"\}', text)
    if not kinds:
        raise SystemExit(f"validate_journal.py: found no kind table in {record_cc}")
    return set(kinds)


def lines_of(source):
    """(file, line number, text) of every record line of an audit folder or a file."""
    if os.path.isdir(source):
        paths = sorted(glob.glob(os.path.join(source, "journal", "*.log")))
        if not paths:
            raise SystemExit(f"validate_journal.py: no journal segments in {source}/journal")
    else:
        paths = [source]
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if line.strip():
                    yield path, number, line


def main(argv):
    args = list(argv[1:])
    record_cc = None
    if "--kinds-from" in args:
        i = args.index("--kinds-from")
        record_cc = args[i + 1]
        del args[i:i + 2]
    if len(args) < 2:
        sys.stderr.write(__doc__)
        return 2
    folder, sources = args[0], args[1:]
    schemas = load_schemas(folder)
    validators = make_validators(schemas)
    failures = []
    with_schema = {n[:-len(".schema.json")] for n in schemas if n != ENVELOPE}
    if record_cc:
        written = code_kinds(record_cc)
        envelope_kinds = set(schemas[ENVELOPE]["properties"]["kind"]["enum"])
        for kind in sorted(written - with_schema):
            failures.append(f"{record_cc}: kind {kind} has no schema ({folder}/{kind}.schema.json)")
        for kind in sorted(with_schema - written):
            failures.append(f"{folder}/{kind}.schema.json: no such kind in {record_cc}")
        if envelope_kinds != written:
            failures.append(f"{folder}/{ENVELOPE}: kind enum {sorted(envelope_kinds)} differs from {record_cc}")
    counts = {}
    for source in sources:
        for path, number, line in lines_of(source):
            where = f"{path}:{number}"
            try:
                record = json.loads(line)
            except ValueError as e:
                failures.append(f"{where}: not JSON: {e}")
                continue
            kind = record.get("kind") if isinstance(record, dict) else None
            seq = record.get("seq") if isinstance(record, dict) else None
            name = f"{kind}.schema.json"
            if not isinstance(kind, str) or name not in validators:
                failures.append(f"{where}: seq {seq} kind {kind}: no schema for this kind in {folder}")
                continue
            counts[kind] = counts.get(kind, 0) + 1
            errors = sorted(validators[name].iter_errors(record), key=lambda e: list(e.absolute_path))
            for e in errors:
                path_text = "/".join(str(p) for p in e.absolute_path) or "(record)"
                failures.append(f"{where}: seq {seq} kind {kind}: {path_text}: {e.message}")
    for kind in sorted(counts):
        print(f"{kind}: {counts[kind]} valid" if not any(f" kind {kind}:" in x for x in failures) else
              f"{kind}: {counts[kind]} checked")
    for failure in failures:
        print("FAIL: " + failure)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print(f"OK: {sum(counts.values())} records of {len(counts)} kinds valid")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
