#!/usr/bin/env node
// Validates gpufed YAML files against schemas/gpufed.schema.json with ajv (draft 2020-12).
//
//   node validate.mjs [--errors] [--tsv] FILE_OR_DIR...   validate; prints {"file": valid_bool, ...}
//   node validate.mjs --check-schemas                     meta-schema check and lint of every schema
//   node validate.mjs --self-test FIXTURES_DIR            valid/ must pass, invalid/ must fail
//   node validate.mjs --summarize-gpufed FIXTURE < OUT    reads `gpufed validate --output json` output
//
// Options: --schemas DIR (default: ../../schemas beside this script).
// Exit status: 0 when everything asked for held (for plain validation: every file valid),
// 1 when something failed, 2 on usage errors.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import Ajv2020 from "ajv/dist/2020.js";
import YAML from "yaml";

const here = path.dirname(fileURLToPath(import.meta.url));
const SCHEMA_BASE = "https://gpufed.dev/schemas/v1alpha1/";
const ROOT_SCHEMA = "gpufed.schema.json";
const META_2020 = "https://json-schema.org/draft/2020-12/schema";

function usage(message) {
  if (message) process.stderr.write(`validate.mjs: ${message}\n`);
  process.stderr.write(
    "usage: node validate.mjs [--schemas DIR] [--errors] [--tsv] FILE_OR_DIR...\n" +
      "       node validate.mjs [--schemas DIR] --check-schemas\n" +
      "       node validate.mjs [--schemas DIR] --self-test FIXTURES_DIR\n" +
      "       node validate.mjs --summarize-gpufed FIXTURE < gpufed-output.json\n",
  );
  process.exit(2);
}

// ---------------------------------------------------------------- schemas

function loadSchemas(dir) {
  if (!fs.existsSync(dir)) usage(`schema directory ${dir} does not exist`);
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".schema.json")).sort();
  if (!files.includes(ROOT_SCHEMA)) usage(`${dir} has no ${ROOT_SCHEMA}`);
  const schemas = new Map();
  for (const f of files) {
    const text = fs.readFileSync(path.join(dir, f), "utf8");
    try {
      schemas.set(f, JSON.parse(text));
    } catch (e) {
      throw new Error(`${f}: not valid JSON: ${e.message}`);
    }
  }
  return schemas;
}

// Builds an ajv instance with every schema added. Strict mode warnings (which ajv only
// logs) are collected so --check-schemas can fail on them.
function makeAjv(schemas) {
  const warnings = [];
  const logger = {
    log: () => {},
    warn: (...args) => warnings.push(args.join(" ")),
    error: (...args) => warnings.push(args.join(" ")),
  };
  const ajv = new Ajv2020({
    strict: true,
    strictTypes: true,
    allowUnionTypes: true,
    // strictRequired cannot see properties that come through a sibling $ref (Workload spec).
    strictRequired: false,
    allErrors: true,
    logger,
  });
  for (const [, schema] of schemas) ajv.addSchema(schema);
  return { ajv, warnings };
}

// Walks a schema and reports style problems: every property needs a description (editors
// show them) and every object schema that lists properties must forbid unknown ones.
function lintSchema(file, schema) {
  const problems = [];
  const walk = (node, where) => {
    if (Array.isArray(node)) {
      node.forEach((child, i) => walk(child, `${where}/${i}`));
      return;
    }
    if (node === null || typeof node !== "object") return;
    // Inside if/then/else, properties are conditions on fields documented elsewhere.
    const inCondition = /\/(if|then|else)(\/|$)/.test(where);
    if ((node.properties || node.patternProperties) && !inCondition) {
      if (node.additionalProperties !== false && node.unevaluatedProperties !== false) {
        problems.push(`${file}#${where}: lists properties but does not set additionalProperties: false`);
      }
    }
    if (node.properties) {
      for (const [name, prop] of Object.entries(node.properties)) {
        if (!inCondition && (typeof prop !== "object" || typeof prop.description !== "string" || prop.description.length === 0)) {
          problems.push(`${file}#${where}/properties/${name}: has no description`);
        }
      }
    }
    for (const [key, child] of Object.entries(node)) {
      if (key === "enum" || key === "const" || key === "required") continue;
      walk(child, `${where}/${key}`);
    }
  };
  walk(schema, "");
  if (schema.$schema !== META_2020) problems.push(`${file}: $schema is not ${META_2020}`);
  if (schema.$id !== SCHEMA_BASE + file) problems.push(`${file}: $id is not ${SCHEMA_BASE + file}`);
  return problems;
}

function checkSchemas(dir) {
  const problems = [];
  let schemas;
  try {
    schemas = loadSchemas(dir);
  } catch (e) {
    console.log(`FAIL ${e.message}`);
    return false;
  }
  // Meta-schema validation of each file on its own.
  const meta = new Ajv2020({ strict: false });
  for (const [file, schema] of schemas) {
    if (!meta.validateSchema(schema)) {
      problems.push(`${file}: not valid under the draft 2020-12 meta-schema: ${meta.errorsText(meta.errors)}`);
    }
    problems.push(...lintSchema(file, schema));
  }
  // Compile every schema (resolves every $ref, applies strict mode).
  const { ajv, warnings } = makeAjv(schemas);
  for (const [file, schema] of schemas) {
    try {
      ajv.getSchema(schema.$id) || ajv.compile(schema);
    } catch (e) {
      problems.push(`${file}: does not compile: ${e.message}`);
    }
  }
  for (const w of warnings) problems.push(`strict mode: ${w}`);
  for (const [file] of schemas) {
    if (!problems.some((p) => p.startsWith(file))) console.log(`ok   ${file}`);
  }
  for (const p of problems) console.log(`FAIL ${p}`);
  return problems.length === 0;
}

// ---------------------------------------------------------------- validation

// "/spec/nodePools/0/gpu" -> "spec.nodePools[0].gpu"
export function dottedPath(instancePath, extra) {
  const parts = instancePath.split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (extra !== undefined) parts.push(extra);
  let out = "";
  for (const p of parts) {
    if (/^[0-9]+$/.test(p)) out += `[${p}]`;
    else out += out === "" ? p : `.${p}`;
  }
  return out;
}

function errorField(err) {
  if (err.keyword === "additionalProperties") return dottedPath(err.instancePath, err.params.additionalProperty);
  if (err.keyword === "required") return dottedPath(err.instancePath, err.params.missingProperty);
  if (err.keyword === "propertyNames") return dottedPath(err.instancePath, err.params.propertyName);
  if (err.propertyName !== undefined) return dottedPath(err.instancePath, err.propertyName);  // inside propertyNames
  return dottedPath(err.instancePath);
}

function describeError(err) {
  let message = err.message;
  if (err.keyword === "additionalProperties") message = `unknown field '${err.params.additionalProperty}'`;
  else if (err.keyword === "enum") message += `: ${err.params.allowedValues.join(", ")}`;
  else if (err.keyword === "const") message += `: ${JSON.stringify(err.params.allowedValue)}`;
  return message;
}

// Validates every YAML document of a file. Returns {valid, documents, errors:[{document, line, field, message}]}.
function validateFile(validate, file) {
  const text = fs.readFileSync(file, "utf8");
  const result = { valid: true, documents: 0, errors: [] };
  const lineCounter = new YAML.LineCounter();
  const docs = YAML.parseAllDocuments(text, { lineCounter, prettyErrors: false });
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, index) => {
    for (const e of doc.errors) {
      const pos = e.pos ? lineCounter.linePos(e.pos[0]) : { line: 0 };
      result.errors.push({ document: index, line: pos.line, field: "", message: `yaml: ${e.message.split("\n")[0]}` });
    }
    if (doc.errors.length > 0) return;
    let value;
    try {
      value = doc.toJS();  // throws on alias bombs ("billion laughs") and bad aliases
    } catch (e) {
      result.errors.push({ document: index, line: 0, field: "", message: `yaml: ${e.message}` });
      return;
    }
    if (value === null || value === undefined) return;  // empty document (e.g. a trailing ---)
    result.documents += 1;
    if (!validate(value)) {
      // "must match then schema" only summarises the kind's own errors: leave it out.
      const errors = validate.errors.filter((err) => err.keyword !== "if");
      const seen = new Set();
      for (const err of errors.length > 0 ? errors : validate.errors) {
        const field = errorField(err);
        const message = describeError(err);
        // The envelope (metadata, apiVersion) is checked by gpufed.schema.json and again by the kind's schema.
        if (seen.has(`${field}\n${message}`)) continue;
        seen.add(`${field}\n${message}`);
        result.errors.push({ document: index, line: lineOf(doc, lineCounter, err), field, message });
      }
    }
  });
  result.valid = result.errors.length === 0;
  return result;
}

function lineOf(doc, lineCounter, err) {
  const parts = err.instancePath.split("/").slice(1).map((p) => (/^[0-9]+$/.test(p) ? Number(p) : p));
  for (let n = parts.length; n >= 0; --n) {
    const node = n === 0 ? doc.contents : doc.getIn(parts.slice(0, n), true);
    if (node && node.range) return lineCounter.linePos(node.range[0]).line;
  }
  return 0;
}

function collectFiles(args) {
  const files = [];
  for (const arg of args) {
    if (!fs.existsSync(arg)) usage(`${arg} does not exist`);
    if (fs.statSync(arg).isDirectory()) {
      for (const entry of fs.readdirSync(arg, { recursive: true }).sort()) {
        const full = path.join(arg, entry);
        if (/\.ya?ml$/.test(entry) && fs.statSync(full).isFile()) files.push(full);
      }
    } else {
      files.push(arg);
    }
  }
  return files;
}

function compileRoot(dir) {
  const schemas = loadSchemas(dir);
  const { ajv } = makeAjv(schemas);
  const validate = ajv.getSchema(SCHEMA_BASE + ROOT_SCHEMA);
  if (!validate) throw new Error(`cannot compile ${ROOT_SCHEMA}`);
  return validate;
}

// Fields an invalid fixture must be rejected for, from "# field: a.b.c" comment lines.
export function expectedFields(file) {
  const fields = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const m = /^#\s*field:\s*(\S+)\s*$/.exec(line);
    if (m) fields.push(m[1]);
  }
  return fields;
}

// "spec.nodePools[0].gpu" and "spec.nodePools.0.gpu" compare equal.
export function normalizeField(field) {
  return field.replace(/\[([0-9]+)\]/g, ".$1").replace(/^\./, "");
}

// True when some reported field is the expected field or lies below it.
export function fieldReported(expected, reported) {
  const e = normalizeField(expected);
  return reported.some((r) => {
    const n = normalizeField(r);
    return n === e || n.startsWith(`${e}.`);
  });
}

function selfTest(dir, validate) {
  let passed = 0;
  const failures = [];
  for (const kind of ["valid", "invalid"]) {
    const files = collectFiles([path.join(dir, kind)]);
    if (files.length === 0) failures.push(`${kind}/: no fixtures`);
    for (const file of files) {
      const r = validateFile(validate, file);
      const rel = path.relative(dir, file);
      if (kind === "valid" && !r.valid) {
        failures.push(`${rel}: ajv rejects a valid fixture: ${r.errors.map((e) => `${e.field}: ${e.message}`).join("; ")}`);
      } else if (kind === "invalid" && r.valid) {
        failures.push(`${rel}: ajv accepts an invalid fixture`);
      } else if (kind === "invalid" && r.documents !== 1 && !r.errors.some((e) => e.message.startsWith("yaml:"))) {
        failures.push(`${rel}: a fixture must hold exactly one document (has ${r.documents})`);
      } else if (kind === "invalid") {
        const want = expectedFields(file);
        const got = r.errors.map((e) => e.field);
        const missing = want.filter((f) => !fieldReported(f, got));
        // A fixture is invalid for the reasons it names and no other: every error lies at
        // or below a named field (so that a loader rejecting it for another reason is caught).
        const extra = [...new Set(got.filter((g) => !want.some((f) => fieldReported(f, [g]))))];
        if (want.length === 0) failures.push(`${rel}: invalid fixture has no '# field:' comment`);
        else if (missing.length > 0) failures.push(`${rel}: ajv does not report ${missing.join(", ")} (reports ${[...new Set(got)].join(", ")})`);
        else if (extra.length > 0) failures.push(`${rel}: ajv also reports ${extra.join(", ")}, which the fixture does not name`);
        else passed += 1;
      } else {
        passed += 1;
      }
    }
  }
  const context = path.join(dir, "context.yaml");
  if (fs.existsSync(context)) {
    const r = validateFile(validate, context);
    if (!r.valid) failures.push(`context.yaml: ajv rejects it: ${r.errors.map((e) => `${e.field}: ${e.message}`).join("; ")}`);
    else passed += 1;
  }
  for (const f of failures) console.log(`FAIL ${f}`);
  console.log(`ajv self-test: ${passed} passed, ${failures.length} failed`);
  return failures.length === 0;
}

// Reads `gpufed validate --output json` output from stdin and prints one line:
//   valid<TAB>{true|false|unknown}<TAB>documents<TAB>fields(comma)<TAB>files(comma)
function summarizeGpufed(fixture) {
  const text = fs.readFileSync(0, "utf8");
  let out;
  try {
    // Tolerate log lines before the JSON object.
    const start = text.indexOf("{");
    out = JSON.parse(start >= 0 ? text.slice(start) : text);
  } catch {
    console.log("unparsable\t\t\t\t");
    return;
  }
  const errors = Array.isArray(out.errors) ? out.errors : [];
  const fields = errors.map((e) => (typeof e.field === "string" ? e.field : "")).filter((f) => f !== "");
  const base = path.basename(fixture);
  const files = errors.map((e) => (typeof e.file === "string" ? e.file : ""));
  const foreign = files.filter((f) => f !== "" && path.basename(f) !== base);
  const valid = typeof out.valid === "boolean" ? String(out.valid) : "unknown";
  console.log(`${valid}\t${out.documents ?? ""}\t${fields.join(",")}\t${foreign.join(",")}\t${errors.map((e) => `${e.file ?? "?"}:${e.line ?? "?"}:${e.column ?? "?"}: ${e.field ?? ""}: ${e.message ?? ""}`.replace(/[\t\n]/g, " ")).join(" | ")}`);
}

// ---------------------------------------------------------------- main

function main(argv) {
  let schemaDir = path.resolve(here, "..", "..", "schemas");
  let errorsToStderr = false;
  let tsv = false;
  let mode = "validate";
  let modeArg = null;
  const rest = [];
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === "--schemas") schemaDir = argv[++i] ?? usage("--schemas needs a directory");
    else if (a === "--errors") errorsToStderr = true;
    else if (a === "--tsv") tsv = true;
    else if (a === "--check-schemas") mode = "check";
    else if (a === "--self-test") (mode = "self-test"), (modeArg = argv[++i] ?? usage("--self-test needs a directory"));
    else if (a === "--summarize-gpufed") (mode = "summarize"), (modeArg = argv[++i] ?? usage("--summarize-gpufed needs a fixture"));
    else if (a === "-h" || a === "--help") usage();
    else if (a.startsWith("--")) usage(`unknown option ${a}`);
    else rest.push(a);
  }

  if (mode === "summarize") {
    summarizeGpufed(modeArg);
    return 0;
  }
  if (mode === "check") return checkSchemas(schemaDir) ? 0 : 1;

  let validate;
  try {
    validate = compileRoot(schemaDir);
  } catch (e) {
    process.stderr.write(`validate.mjs: ${e.message}\n`);
    return 1;
  }
  if (mode === "self-test") return selfTest(modeArg, validate) ? 0 : 1;

  if (rest.length === 0) usage("no files given");
  const results = {};
  let allValid = true;
  for (const file of collectFiles(rest)) {
    const r = validateFile(validate, file);
    results[file] = r.valid;
    allValid &&= r.valid;
    if (tsv) {
      const fields = [...new Set(r.errors.map((e) => e.field))].join(",");
      const messages = r.errors.map((e) => `${e.line}: ${e.field}: ${e.message}`.replace(/[\t\n]/g, " ")).join(" | ");
      console.log(`${file}\t${r.valid ? "valid" : "invalid"}\t${fields}\t${messages}`);
    }
    if (errorsToStderr) {
      for (const e of r.errors) process.stderr.write(`${file}:${e.line}: ${e.field || "(document)"}: ${e.message}\n`);
    }
  }
  if (!tsv) console.log(JSON.stringify(results, null, 2));
  return allValid ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
