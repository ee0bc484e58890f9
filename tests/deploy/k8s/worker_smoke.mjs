// Runs the built hipr-worker with the arguments of the rendered DaemonSet
// (without the image's tini in front), so that a flag the worker does not
// know, an --auth-file it refuses or a probe path it does not serve fails
// here rather than in a cluster.
//
//   node worker_smoke.mjs --npm DIR WORKER.yaml HIPR_WORKER_BINARY
//
// What a node has and this machine has not is swapped, and said so: --device
// hip becomes sim (no GPU), the listeners move to 127.0.0.1 with port 0
// (their ports are read back from --port-file/--metrics-port-file), and the
// files the arguments name under Secret mounts are written, from the
// rendered Secrets, into a private temporary directory with the mount's mode.
// Then /healthz and /readyz (the probes' paths) must answer 200 and
// /metrics must say hipr_ready 1; SIGTERM must end the worker with status 0
// within 10 s, as a pod's termination does. Exit 0 on success, 1 otherwise.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { containersOf, podTemplates } from "./objects.mjs";
import { workerArgs } from "./consistency.mjs";

const [flag, npmDir, workerFile, binary] = process.argv.slice(2);
if (flag !== "--npm" || !binary) {
  console.error("usage: node worker_smoke.mjs --npm DIR WORKER.yaml HIPR_WORKER_BINARY");
  process.exit(2);
}
const YAML = createRequire(path.join(path.resolve(npmDir), "package.json"))("yaml");
const objects = YAML.parseAllDocuments(fs.readFileSync(workerFile, "utf8"), { version: "1.1" }).map((d) => d.toJS());
const fail = (why) => { console.log(`FAIL  worker smoke: ${why}`); process.exit(1); };

let pod, container;
for (const o of objects)
  for (const t of podTemplates(o))
    for (const c of containersOf(t.spec))
      if (workerArgs(c)) [pod, container] = [t.spec, c];
if (!container) fail("no container runs hipr-worker");

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "hipr-k8s-smoke-"));
const namespace = objects.find((o) => o.kind === "DaemonSet")?.metadata?.namespace;

// Writes the Secret file a path names (under a Secret volume mount) into tmp;
// returns its path there, or null when the path is on no Secret mount.
function materialize(file) {
  for (const m of container.volumeMounts ?? []) {
    const dir = m.mountPath.replace(/\/$/, "");
    if (!file.startsWith(dir + "/")) continue;
    const vol = (pod.volumes ?? []).find((v) => v.name === m.name);
    if (!vol?.secret) return null;
    const rel = file.slice(dir.length + 1);
    const item = vol.secret.items ? vol.secret.items.find((it) => it.path === rel) : { key: rel };
    const secret = objects.find((o) => o.kind === "Secret" && o.metadata.name === vol.secret.secretName &&
                                       o.metadata.namespace === namespace);
    if (!item || !secret) fail(`${file}: no Secret key behind it`);
    const value = secret.stringData?.[item.key] ??
                  (secret.data?.[item.key] !== undefined ? Buffer.from(secret.data[item.key], "base64").toString() : undefined);
    if (value === undefined) fail(`${file}: Secret ${secret.metadata.name} has no key ${item.key}`);
    const out = path.join(tmp, "secrets", m.name, rel);
    fs.mkdirSync(path.dirname(out), { recursive: true, mode: 0o700 });
    fs.writeFileSync(out, value, { mode: 0o600 });
    fs.chmodSync(out, item.mode ?? vol.secret.defaultMode ?? 0o644);
    return out;
  }
  return null;
}

const portFile = path.join(tmp, "port"), metricsPortFile = path.join(tmp, "metrics-port");
const swapped = [];
const args = workerArgs(container).map((a) => {
  const m = /^--([^=]+)=(.*)$/.exec(a);
  if (!m) return a;
  const [, name, value] = m;
  if (name === "listen") { swapped.push(`--listen ${value} -> 127.0.0.1:0`); return "--listen=127.0.0.1:0"; }
  if (name === "metrics-listen") { swapped.push(`--metrics-listen ${value} -> 127.0.0.1:0`); return "--metrics-listen=127.0.0.1:0"; }
  if (name === "device" && value === "hip") { swapped.push("--device hip -> sim"); return "--device=sim"; }
  if (name === "code-cache") { swapped.push(`--code-cache ${value} -> a temporary directory`); return `--code-cache=${path.join(tmp, "cache", path.basename(value))}`; }
  const file = value.startsWith("/") ? materialize(value) : null;
  if (file) { swapped.push(`--${name} ${value} -> its Secret's content`); return `--${name}=${file}`; }
  return a;
});
args.push(`--port-file=${portFile}`, `--metrics-port-file=${metricsPortFile}`);
if (args.includes("--device=sim")) args.push("--sim-memory=256M");
console.log(`      worker smoke: ${path.basename(binary)} ${args.join(" ")}`);
console.log(`      swapped for this machine: ${swapped.join("; ")}`);

const child = spawn(binary, args, { stdio: ["ignore", "inherit", "pipe"] });
let stderr = "";
child.stderr.on("data", (d) => { stderr += d; });
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
let done = false;
exited.then(() => { done = true; });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function main() {
  let port = "";
  for (let i = 0; i < 100 && !done && !port; ++i) {
    await sleep(100);
    if (fs.existsSync(metricsPortFile)) port = fs.readFileSync(metricsPortFile, "utf8").trim();
  }
  if (done) return `the worker exited (${JSON.stringify(await exited)}) before its metrics listener was up`;
  if (!port) return "the worker did not start its metrics listener in 10 s";
  const base = `http://127.0.0.1:${port}`;
  // /readyz turns 200 once the worker is ready: poll it a little.
  for (const p of [container.livenessProbe?.httpGet?.path, container.readinessProbe?.httpGet?.path]) {
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; ++i) {
      status = await fetch(base + p).then((r) => r.status, () => 0);
      if (status !== 200) await sleep(100);
    }
    if (status !== 200) return `GET ${p} answered ${status || "nothing"}`;
    console.log(`ok    worker smoke: GET ${p} -> 200`);
  }
  const metrics = await fetch(base + "/metrics").then((r) => r.text(), () => "");
  if (!/^hipr_ready 1$/m.test(metrics)) return "/metrics does not say hipr_ready 1";
  console.log("ok    worker smoke: /metrics says hipr_ready 1");
  child.kill("SIGTERM");
  const deadline = new Promise((r) => setTimeout(() => r(null), 10000).unref());
  const end = await Promise.race([exited, deadline]);
  if (!end) return "SIGTERM did not end the worker within 10 s";
  if (end.code !== 0) return `the worker exited with ${end.code ?? end.signal} after SIGTERM`;
  console.log("ok    worker smoke: SIGTERM -> exit 0");
  return null;
}

const problem = await main().catch((e) => e.message);
if (!done) child.kill("SIGKILL");
await exited;
fs.rmSync(tmp, { recursive: true, force: true });
if (problem) {
  process.stdout.write(stderr.split("\n").slice(-15).map((l) => `      | ${l}`).join("\n") + "\n");
  fail(problem);
}
