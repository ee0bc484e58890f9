// Validates hipr's Kubernetes manifests (deploy/k8s) with no cluster.
//
//   node validate.mjs --npm DIR objects FILE...
//       every YAML document of every file on its own: a Kubernetes object
//       (known kind, the kubernetes-models schema: types, enums, required
//       fields; no unknown field; objects.mjs' server-side rules), a
//       kustomization (every path it names exists) or a JSON patch; a file
//       beside a kustomization.yaml must be named by it.
//   node validate.mjs --npm DIR deployment WORKER.yaml [CLIENT.yaml]
//       the rendered sets (kubectl kustomize): every object as above, then
//       consistency.mjs' checks across them.
//   node validate.mjs --npm DIR selftest WORKER.yaml CLIENT.yaml
//       each of consistency.mjs' broken copies of those sets must be rejected.
//   node validate.mjs --npm DIR render-plain KUSTOMIZATION_DIR
//       prints the objects of a kustomization that uses only resources,
//       namespace and images: the stand-in for `kubectl kustomize` where
//       kubectl is missing.
//
// DIR holds node_modules/ with kubernetes-models and yaml (run.sh installs
// them). YAML is read as YAML 1.1, as Kubernetes reads it (`on` is a
// boolean, `0440` octal). Prints one line per file or case; exits 1 when
// anything failed, 2 on a usage error.

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { KnownFields } from "./fields.mjs";
import { checkObject, containersOf, describe, podTemplates } from "./objects.mjs";
import { checkDeployment, kMutations } from "./consistency.mjs";

function usage(why) {
  console.error(`validate.mjs: ${why}\nusage: node validate.mjs --npm DIR (objects FILE... | deployment WORKER [CLIENT] | selftest WORKER CLIENT | render-plain DIR)`);
  process.exit(2);
}

const argv = process.argv.slice(2);
if (argv[0] !== "--npm" || argv.length < 4) usage("missing arguments");
const npmDir = path.resolve(argv[1]);
const [mode, ...files] = argv.slice(2);
const require = createRequire(path.join(npmDir, "package.json"));
const YAML = require("yaml");
const knownFields = new KnownFields(npmDir);

// The model class of an apiVersion and kind (kubernetes-models/<apiVersion>/<Kind>,
// the core group being plain v1), or null. Loaded on demand: the whole
// package takes seconds to load.
const kModelPath = /^([a-z0-9.-]+\/)?v[0-9]+((alpha|beta)[0-9]+)?$/;
function modelOf(apiVersion, kind) {
  if (!kModelPath.test(apiVersion) || !/^[A-Z][A-Za-z0-9]*$/.test(kind)) return null;
  let cls;
  try {
    cls = require(`kubernetes-models/${apiVersion}/${kind}`)[kind];
  } catch (e) {
    if (e.code === "MODULE_NOT_FOUND") return null;
    throw e;
  }
  return cls?.apiVersion === apiVersion && cls?.kind === kind ? cls : null;
}

// Every document of a file as {value} or {problem}.
function readDocuments(file) {
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    return [{ problem: `cannot read: ${e.message}` }];
  }
  const docs = YAML.parseAllDocuments(text, { version: "1.1", prettyErrors: false });
  const out = [];
  for (const d of docs) {
    if (d.errors.length) out.push({ problem: `YAML: ${d.errors[0].message.split("\n")[0]}` });
    else if (d.contents !== null) out.push({ value: d.toJS() });
  }
  return out;
}

// Schema, fields and object rules of one Kubernetes object.
function checkKubernetesObject(obj) {
  if (typeof obj.apiVersion !== "string" || typeof obj.kind !== "string") return ["apiVersion and kind are required"];
  const model = modelOf(obj.apiVersion, obj.kind);
  if (!model) return [`unknown kind ${obj.kind} in ${obj.apiVersion} (not a built-in kind kubernetes-models knows)`];
  try {
    new model(obj).validate();
  } catch (e) {
    if (!e.errors) throw e;
    return e.errors.map((err) => {
      const where = err.instancePath.replace(/^\//, "").replaceAll("/", ".") || "(object)";
      const extra = err.params?.allowedValues ? `: ${err.params.allowedValues.join(", ")}` : "";
      return `${where} ${err.message}${extra}`;
    });
  }
  const unknown = knownFields.unknownFields(obj).map((f) => `unknown field ${f}`);
  return [...unknown, ...checkObject(obj)];
}

const kKustomizeApi = /^kustomize\.config\.k8s\.io\//;

// Paths a kustomization names: resources, components, patches.
function kustomizationPaths(k) {
  const paths = [...(k.resources ?? []), ...(k.components ?? [])];
  for (const p of [...(k.patches ?? []), ...(k.patchesJson6902 ?? [])]) if (p.path) paths.push(p.path);
  for (const p of k.patchesStrategicMerge ?? []) if (typeof p === "string") paths.push(p);
  return paths;
}

function checkKustomization(k, file) {
  const out = [];
  if (!["Kustomization", "Component"].includes(k.kind)) out.push(`kind ${k.kind} is not Kustomization or Component`);
  for (const p of kustomizationPaths(k))
    if (!fs.existsSync(path.resolve(path.dirname(file), p))) out.push(`names ${p}, which does not exist`);
  return out;
}

function checkJsonPatch(ops) {
  const out = [];
  ops.forEach((op, i) => {
    if (!["add", "remove", "replace", "move", "copy", "test"].includes(op?.op)) out.push(`patch op ${i}: op ${op?.op} is not a JSON patch op`);
    if (typeof op?.path !== "string" || !op.path.startsWith("/")) out.push(`patch op ${i}: path must start with /`);
    if (["add", "replace", "test"].includes(op?.op) && !("value" in op)) out.push(`patch op ${i}: needs a value`);
  });
  return out;
}

// A YAML file beside a kustomization.yaml must be one of its paths, or it is
// silently left out of what `kubectl apply -k` applies.
function checkNamedByKustomization(file) {
  const dir = path.dirname(file);
  const kfile = path.join(dir, "kustomization.yaml");
  if (path.basename(file) === "kustomization.yaml" || !fs.existsSync(kfile)) return [];
  const k = readDocuments(kfile)[0]?.value ?? {};
  const named = kustomizationPaths(k).map((p) => path.resolve(dir, p));
  return named.includes(path.resolve(file)) ? [] : [`not named by ${kfile}`];
}

function objectsMode(paths) {
  let failed = 0;
  for (const file of paths) {
    const problems = [...checkNamedByKustomization(file)];
    const seen = [];
    for (const doc of readDocuments(file)) {
      if (doc.problem) { problems.push(doc.problem); continue; }
      const v = doc.value;
      if (Array.isArray(v)) {
        seen.push("JSON patch");
        problems.push(...checkJsonPatch(v));
      } else if (v && typeof v === "object" && kKustomizeApi.test(v.apiVersion ?? "")) {
        seen.push(v.kind);
        problems.push(...checkKustomization(v, file));
      } else if (v && typeof v === "object") {
        seen.push(describe(v));
        problems.push(...checkKubernetesObject(v).map((p) => `${describe(v)}: ${p}`));
      } else {
        problems.push(`a document is neither an object nor a JSON patch`);
      }
    }
    if (seen.length === 0 && problems.length === 0) problems.push("no document");
    report(file, seen, problems);
    failed += problems.length > 0;
  }
  return failed;
}

function report(what, seen, problems) {
  if (problems.length === 0) console.log(`ok    ${what}: ${seen.join(", ")}`);
  else for (const p of problems) console.log(`FAIL  ${what}: ${p}`);
}

// The objects of a rendered set, each checked on its own first.
function loadSet(file) {
  const objects = [], problems = [];
  for (const doc of readDocuments(file)) {
    if (doc.problem) problems.push(doc.problem);
    else if (!doc.value || Array.isArray(doc.value)) problems.push("a document is not an object");
    else {
      objects.push(doc.value);
      problems.push(...checkKubernetesObject(doc.value).map((p) => `${describe(doc.value)}: ${p}`));
    }
  }
  if (objects.length === 0) problems.push("no object");
  return { objects, problems };
}

// consistency.mjs' checks; objects that already failed their own checks may
// be too malformed to cross-check, which is then left at that.
function crossChecks(worker, client, alreadyFailed) {
  try {
    return checkDeployment(worker, client);
  } catch (e) {
    if (alreadyFailed) return [];
    throw e;
  }
}

function deploymentMode(workerFile, clientFile) {
  const w = loadSet(workerFile);
  const c = clientFile ? loadSet(clientFile) : null;
  const problems = [...w.problems, ...(c?.problems ?? [])];
  problems.push(...crossChecks(w.objects, c?.objects ?? null, problems.length > 0));
  const names = [...w.objects, ...(c?.objects ?? [])].map(describe);
  report(clientFile ? `${workerFile} + ${clientFile}` : workerFile, names, problems);
  return problems.length > 0 ? 1 : 0;
}

function selftestMode(workerFile, clientFile) {
  const w = loadSet(workerFile), c = loadSet(clientFile);
  const base = [...w.problems, ...c.problems];
  base.push(...crossChecks(w.objects, c.objects, base.length > 0));
  if (base.length) {
    report("selftest baseline", [], base);
    return 1;
  }
  let failed = 0;
  for (const m of kMutations) {
    const [wc, cc] = [structuredClone(w.objects), structuredClone(c.objects)];
    m.apply(wc, cc);
    const problems = [...wc, ...cc].flatMap((o) => checkKubernetesObject(o)).concat(checkDeployment(wc, cc));
    const hit = problems.find((p) => p.includes(m.expect));
    if (hit) console.log(`ok    rejected: ${m.name}: ${hit}`);
    else {
      console.log(`FAIL  not rejected: ${m.name} (expected "${m.expect}"; got ${problems.length ? problems.join(" | ") : "no problem"})`);
      ++failed;
    }
  }
  return failed;
}

// Where kubectl is missing: a kustomization that uses only plain resource
// files, namespace and images, rendered as `kubectl kustomize` would.
function renderPlainMode(dir) {
  const k = readDocuments(path.join(dir, "kustomization.yaml"))[0]?.value ?? {};
  const extra = Object.keys(k).filter((key) => !["apiVersion", "kind", "namespace", "resources", "images"].includes(key));
  if (extra.length) usage(`${dir}/kustomization.yaml uses ${extra.join(", ")}: render it with kubectl kustomize`);
  const out = [];
  for (const r of k.resources ?? []) {
    for (const doc of readDocuments(path.join(dir, r))) {
      if (doc.problem) usage(`${r}: ${doc.problem}`);
      const obj = doc.value;
      if (k.namespace && obj.kind !== "Namespace") obj.metadata = { ...obj.metadata, namespace: k.namespace };
      for (const t of podTemplates(obj))
        for (const c of containersOf(t.spec)) {
          const img = (k.images ?? []).find((i) => i.name === c.image.split(":")[0]);
          if (img) c.image = `${img.newName ?? img.name}:${img.newTag ?? "latest"}`;
        }
      out.push(YAML.stringify(obj, { version: "1.1" }));
    }
  }
  process.stdout.write(out.join("---\n"));
  return 0;
}

let failed;
if (mode === "objects") failed = objectsMode(files);
else if (mode === "render-plain" && files.length === 1) failed = renderPlainMode(files[0]);
else if (mode === "deployment" && (files.length === 1 || files.length === 2)) failed = deploymentMode(...files);
else if (mode === "selftest" && files.length === 2) failed = selftestMode(...files);
else usage(`unknown mode or wrong file count: ${mode}`);
process.exit(failed ? 1 : 0);
