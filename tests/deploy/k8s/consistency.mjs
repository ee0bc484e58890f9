// Checks that tie the rendered objects together, the way hipr-worker and its
// clients depend on them: the Service and NetworkPolicy select the worker's
// pods and name the ports the worker's arguments listen on, the probes hit
// the metrics listener, every mounted Secret exists with the keys mounted,
// the files the arguments name are where those Secrets are mounted, and the
// client example reaches the Service, is admitted by the NetworkPolicy and
// holds a credential of the tenants file. Plus the policy of deploy/k8s:
// non-root, read-only root, Pod Security "restricted" where a namespace
// enforces it, AMD GPU nodes, placeholder secrets only.
//
// checkDeployment(worker, client) returns problems (strings); client may be
// null. kMutations are broken copies that selftest must see rejected, one
// per check, so that each check is known to be able to fail.

import { containersOf, describe, podTemplates, resolvePort, selectorMatches } from "./objects.mjs";

const kWorkerUid = 10001;
// Labels that mark AMD GPU nodes: the GPU operator's NFD rule, and AMD's node
// labeller (current and legacy prefixes).
const kGpuNodeLabel = /^(feature\.node\.kubernetes\.io\/amd-gpu|(beta\.)?amd\.com\/gpu\..+)$/;
const kTenantName = /^[A-Za-z0-9._-]{1,64}$/;

// "--name=value" and "--name value" arguments as a Map (flags without value: "").
export function parseArgs(args) {
  const flags = new Map();
  for (let i = 0; i < args.length; ++i) {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(args[i]);
    if (!m) continue;
    if (m[2] !== undefined) flags.set(m[1], m[2]);
    else if (i + 1 < args.length && !args[i + 1].startsWith("--")) flags.set(m[1], args[++i]);
    else flags.set(m[1], "");
  }
  return flags;
}

function portOf(hostPort) {
  const m = /:(\d+)$/.exec(hostPort ?? "");
  return m ? Number(m[1]) : NaN;
}

function secretValue(secret, key) {
  if (secret.stringData && key in secret.stringData) return secret.stringData[key];
  if (secret.data && key in secret.data) return Buffer.from(secret.data[key], "base64").toString("utf8");
  return undefined;
}

// The Secret and key behind a file path in a container: {secret, key} or {problem}.
function secretFile(path, container, podSpec, objects, namespace) {
  for (const m of container.volumeMounts ?? []) {
    const dir = m.mountPath.replace(/\/$/, "");
    if (path !== dir && !path.startsWith(dir + "/")) continue;
    if (m.subPath) return { problem: `the mount of ${m.name} uses subPath, which the kubelet never refreshes: mount the directory` };
    const file = path.slice(dir.length + 1);
    const vol = (podSpec.volumes ?? []).find((v) => v.name === m.name);
    if (!vol?.secret) return { problem: `${path} is on volume ${m.name}, which is not a Secret` };
    if (!m.readOnly) return { problem: `the mount of ${m.name} at ${m.mountPath} is not readOnly` };
    const item = vol.secret.items ? vol.secret.items.find((it) => it.path === file) : { key: file };
    if (!item) return { problem: `${path}: Secret volume ${m.name} has no item with path ${file}` };
    const secret = objects.find((o) => o.kind === "Secret" && o.metadata.name === vol.secret.secretName &&
                                       (o.metadata.namespace ?? namespace) === namespace);
    if (!secret) return { problem: `${path}: Secret ${vol.secret.secretName} is not among the objects` };
    return { secret, key: item.key };
  }
  return { problem: `${path} is on no volume mount of container ${container.name}` };
}

// Secret and ConfigMap references of every pod template exist with their keys.
function checkReferences(objects, out) {
  for (const obj of objects) {
    const ns = obj.metadata?.namespace;
    const find = (kind, name) => objects.find((o) => o.kind === kind && o.metadata?.name === name &&
                                                    o.metadata?.namespace === ns);
    for (const t of podTemplates(obj)) {
      for (const v of t.spec.volumes ?? []) {
        const ref = v.secret ? ["Secret", v.secret.secretName, v.secret] : v.configMap ? ["ConfigMap", v.configMap.name, v.configMap] : null;
        if (!ref || ref[2].optional) continue;
        const target = find(ref[0], ref[1]);
        if (!target) { out.push(`${describe(obj)}: volume ${v.name} mounts ${ref[0]} ${ref[1]}, which is not among the objects`); continue; }
        for (const it of ref[2].items ?? [])
          if (!(it.key in (target.data ?? {})) && !(it.key in (target.stringData ?? {})))
            out.push(`${describe(obj)}: volume ${v.name} mounts key ${it.key}, which ${ref[0]} ${ref[1]} lacks`);
      }
      for (const c of containersOf(t.spec))
        for (const e of c.env ?? []) {
          const r = e.valueFrom?.secretKeyRef;
          if (r && !r.optional && secretValue(find("Secret", r.name) ?? {}, r.key) === undefined)
            out.push(`${describe(obj)}: env ${e.name} reads Secret ${r.name} key ${r.key}, which is not among the objects`);
        }
    }
  }
}

function checkTenants(text, where, out) {
  const tenants = [];
  text.split("\n").forEach((raw, i) => {
    const words = raw.replace(/#.*/, "").trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) return;
    const [name, secret, ...options] = words;
    const at = `${where} line ${i + 1}`;
    if (!kTenantName.test(name)) out.push(`${at}: tenant name "${name}" is not 1 to 64 of A-Z a-z 0-9 . _ -`);
    if (!secret || secret.length < 16 || secret.length > 1024) out.push(`${at}: a secret is 16 to 1024 characters`);
    for (const o of options)
      if (!/^(sessions=\d+|memory=\d+(K|M|G|T|KiB|MiB|GiB|TiB)?)$/.test(o)) out.push(`${at}: "${o}" is not sessions=N or memory=SIZE`);
    tenants.push({ name, secret });
  });
  if (tenants.length === 0) out.push(`${where}: no tenant`);
  return tenants;
}

function nodeAffinityLabels(spec) {
  const keys = Object.keys(spec.nodeSelector ?? {});
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  return { keys, terms: terms.map((t) => (t.matchExpressions ?? []).map((e) => e.key)) };
}

// The arguments hipr-worker gets from a container (those after it in
// command, then args), or null when the container does not run it.
export function workerArgs(c) {
  const at = (c.command ?? []).findIndex((word) => word.endsWith("/hipr-worker"));
  return at < 0 ? null : [...c.command.slice(at + 1), ...(c.args ?? [])];
}

// The worker: {ds, template, container, flags} or null after reporting why.
function findWorker(objects, out) {
  const found = [];
  for (const obj of objects)
    for (const t of podTemplates(obj))
      for (const c of t.spec.containers ?? [])
        if (workerArgs(c)) found.push({ ds: obj, template: t, container: c });
  if (found.length !== 1) { out.push(`expected one container running hipr-worker, found ${found.length}`); return null; }
  const w = found[0];
  if (w.ds.kind !== "DaemonSet") out.push(`${describe(w.ds)}: the worker runs as a DaemonSet, one per GPU node`);
  w.flags = parseArgs(workerArgs(w.container));
  return w;
}

function checkWorkerPod(w, objects, out) {
  const { ds, template: t, container: c, flags } = w;
  const at = describe(ds);
  const ns = ds.metadata.namespace;
  const listen = portOf(flags.get("listen")), metrics = portOf(flags.get("metrics-listen"));
  if (!flags.get("listen")?.startsWith("0.0.0.0:") || Number.isNaN(listen)) out.push(`${at}: --listen must be 0.0.0.0:PORT in a pod`);
  if (Number.isNaN(metrics)) out.push(`${at}: --metrics-listen ADDR:PORT is missing (the probes need it)`);
  if (!flags.has("auth-file") && !flags.has("tls-client-ca")) out.push(`${at}: beyond loopback the worker needs --auth-file or --tls-client-ca`);
  if (flags.get("device") !== "hip") out.push(`${at}: --device must be hip on GPU nodes`);
  const byNumber = (n) => (c.ports ?? []).find((p) => p.containerPort === n);
  if (!byNumber(listen)) out.push(`${at}: no containerPort is the --listen port ${listen}`);
  if (!byNumber(metrics)) out.push(`${at}: no containerPort is the --metrics-listen port ${metrics}`);
  for (const [probe, path] of [["livenessProbe", "/healthz"], ["readinessProbe", "/readyz"]]) {
    const get = c[probe]?.httpGet;
    if (!get) { out.push(`${at}: ${probe} must be an httpGet of ${path}`); continue; }
    if (get.path !== path) out.push(`${at}: ${probe} path ${get.path} is not ${path}`);
    const r = resolvePort(get.port, c, `${probe} port`);
    if (r.number !== metrics) out.push(r.problem ?? `${at}: ${probe} port ${get.port} is not the --metrics-listen port ${metrics}`);
  }
  if (t.annotations?.["prometheus.io/scrape"] !== "true" || Number(t.annotations?.["prometheus.io/port"]) !== metrics)
    out.push(`${at}: pod annotations prometheus.io/scrape "true" and prometheus.io/port ${metrics} are missing or wrong`);
  for (const flag of ["auth-file", "tls-cert", "tls-key", "tls-client-ca"]) {
    if (!flags.has(flag)) continue;
    const r = secretFile(flags.get(flag), c, t.spec, objects, ns);
    if (r.problem) { out.push(`${at}: --${flag} ${r.problem}`); continue; }
    if (flag === "auth-file") {
      const text = secretValue(r.secret, r.key);
      if (text === undefined) out.push(`${at}: Secret ${r.secret.metadata.name} has no key ${r.key}`);
      else w.tenants = checkTenants(text, `Secret ${r.secret.metadata.name} key ${r.key}`, out);
    }
  }
  // Security and placement.
  const psc = t.spec.securityContext ?? {}, csc = c.securityContext ?? {};
  if ((csc.runAsNonRoot ?? psc.runAsNonRoot) !== true || (csc.runAsUser ?? psc.runAsUser) !== kWorkerUid)
    out.push(`${at}: the worker must run as non-root uid ${kWorkerUid} (the image's user hipr)`);
  if (csc.readOnlyRootFilesystem !== true) out.push(`${at}: readOnlyRootFilesystem must be true`);
  if (csc.allowPrivilegeEscalation !== false) out.push(`${at}: allowPrivilegeEscalation must be false`);
  const cache = flags.get("code-cache") ?? "/var/cache/hipr-worker";
  if (cache !== "") {
    const m = (c.volumeMounts ?? []).find((vm) => cache === vm.mountPath || cache.startsWith(vm.mountPath.replace(/\/$/, "") + "/"));
    const v = m && (t.spec.volumes ?? []).find((vol) => vol.name === m.name);
    if (!m || m.readOnly || !(v?.emptyDir || v?.hostPath))
      out.push(`${at}: --code-cache ${cache} must be on a writable emptyDir or hostPath mount (the root filesystem is read-only)`);
  }
  const gpus = c.resources?.limits?.["amd.com/gpu"];
  if (!(Number(gpus) >= 1)) out.push(`${at}: the worker must ask for amd.com/gpu in resources.limits`);
  const { keys, terms } = nodeAffinityLabels(t.spec);
  const gpuOnly = keys.some((k) => kGpuNodeLabel.test(k)) ||
                  (terms.length > 0 && terms.every((term) => term.some((k) => kGpuNodeLabel.test(k))));
  if (!gpuOnly) out.push(`${at}: the worker must be placed only on nodes with an AMD GPU label (nodeSelector or every required node affinity term)`);
}

// The Service and NetworkPolicy of the worker: [{svc, ports: Map(servicePort -> containerPort)}].
function checkWorkerNetwork(w, objects, out) {
  const { ds, template: t, container: c, flags } = w;
  const ns = ds.metadata.namespace;
  const listen = portOf(flags.get("listen")), metrics = portOf(flags.get("metrics-listen"));
  const services = [];
  for (const svc of objects.filter((o) => o.kind === "Service")) {
    const sel = svc.spec?.selector ?? {};
    const selects = Object.keys(sel).length > 0 && selectorMatches({ matchLabels: sel }, t.labels);
    if (!selects) { out.push(`${describe(svc)}: selector ${JSON.stringify(sel)} selects no pod of ${describe(ds)}`); continue; }
    if (svc.metadata.namespace !== ns) out.push(`${describe(svc)}: not in the worker's namespace ${ns}`);
    const ports = new Map();
    for (const p of svc.spec.ports ?? []) {
      const r = resolvePort(p.targetPort ?? p.port, c, `${describe(svc)} targetPort`);
      if (r.problem) out.push(r.problem);
      else ports.set(p.port, r.number);
    }
    // A session whose link dropped resumes only on the pod that holds it:
    // a load-balancing Service must keep a client on one pod for longer
    // than the worker keeps such a session.
    const grace = Number(flags.get("resume-grace-s") ?? 30);
    if (svc.spec.clusterIP !== "None" && grace > 0) {
      const timeout = svc.spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800;
      if (svc.spec.sessionAffinity !== "ClientIP" || timeout < grace)
        out.push(`${describe(svc)}: resumed sessions must reach the same pod: sessionAffinity ClientIP with ` +
                 `timeoutSeconds of at least --resume-grace-s ${grace}`);
    }
    const targets = new Set(ports.values());
    if (!targets.has(listen) || !targets.has(metrics))
      out.push(`${describe(svc)}: must expose the --listen port ${listen} and the --metrics-listen port ${metrics}, exposes ${[...targets].join(", ")}`);
    services.push({ svc, ports });
  }
  if (services.length === 0) out.push(`no Service selects the worker's pods`);
  const policies = objects.filter((o) => o.kind === "NetworkPolicy" && selectorMatches(o.spec?.podSelector, t.labels));
  if (policies.length === 0) out.push(`no NetworkPolicy selects the worker's pods`);
  // --peer-ports FIRST-LAST: workers reach each other there (peer copies),
  // and only there.
  const peerPorts = /^(\d+)-(\d+)$/.exec(flags.get("peer-ports") ?? "");
  const fromWorkers = (rule) => rule.from?.length > 0 &&
      rule.from.every((f) => f.podSelector && !f.namespaceSelector && selectorMatches(f.podSelector, t.labels));
  for (const np of policies) {
    const admitted = new Set();
    let peerRule = false;
    for (const rule of np.spec.ingress ?? []) {
      if (fromWorkers(rule)) {
        peerRule = true;
        const p = rule.ports ?? [];
        if (!peerPorts) out.push(`${describe(np)}: admits workers to each other, but the worker has no --peer-ports`);
        else if (p.length !== 1 || p[0].port !== Number(peerPorts[1]) || (p[0].endPort ?? p[0].port) !== Number(peerPorts[2]))
          out.push(`${describe(np)}: workers must reach each other on exactly --peer-ports ${peerPorts[0]} (port, endPort)`);
        continue;
      }
      if (!rule.from?.length) out.push(`${describe(np)}: an ingress rule without "from" admits everyone`);
      if (!rule.ports?.length) out.push(`${describe(np)}: an ingress rule without "ports" admits every port`);
      for (const p of rule.ports ?? []) {
        const r = resolvePort(p.port, c, `${describe(np)} port`);
        if (r.problem) out.push(r.problem);
        else admitted.add(r.number);
      }
    }
    if (peerPorts && !peerRule)
      out.push(`${describe(np)}: the worker has --peer-ports ${peerPorts[0]} but no rule admits other workers there`);
    for (const { svc, ports } of services) {
      const exposed = [...new Set(ports.values())].sort();
      const allowed = [...admitted].sort();
      if (exposed.join() !== allowed.join())
        out.push(`${describe(np)}: admits ports ${allowed.join(", ")} but ${describe(svc)} serves ${exposed.join(", ")}`);
    }
  }
  w.services = services;
  w.policies = policies;
}

function checkPlaceholders(objects, out) {
  for (const s of objects.filter((o) => o.kind === "Secret")) {
    if (s.data && Object.keys(s.data).length) out.push(`${describe(s)}: carries data; example Secrets hold placeholders in stringData only`);
    for (const [k, v] of Object.entries(s.stringData ?? {}))
      if (!String(v).includes("REPLACE-ME")) out.push(`${describe(s)}: key ${k} is not a REPLACE-ME placeholder (never commit real secrets)`);
  }
}

function checkClient(w, client, out) {
  const jobs = [];
  for (const obj of client)
    for (const t of podTemplates(obj))
      for (const c of t.spec.containers ?? [])
        if ((c.env ?? []).some((e) => e.name === "HIPR_SERVER")) jobs.push({ obj, t, c });
  if (jobs.length === 0) out.push("the client objects have no container with HIPR_SERVER");
  for (const { obj, t, c } of jobs) {
    const at = describe(obj);
    const env = new Map((c.env ?? []).map((e) => [e.name, e.value]));
    const m = /^([a-z0-9-]+)\.([a-z0-9-]+)(?:\.svc(?:\.cluster\.local)?)?:(\d+)$/.exec(env.get("HIPR_SERVER") ?? "");
    const service = m && w.services?.find(({ svc }) => svc.metadata.name === m[1] && svc.metadata.namespace === m[2]);
    if (!service) out.push(`${at}: HIPR_SERVER ${env.get("HIPR_SERVER")} is not <service>.<namespace>.svc:<port> of the worker's Service`);
    else if (service.ports.get(Number(m[3])) !== portOf(w.flags.get("listen")))
      out.push(`${at}: HIPR_SERVER port ${m[3]} is not the Service port of the worker's --listen port`);
    const ns = client.find((o) => o.kind === "Namespace" && o.metadata.name === obj.metadata.namespace);
    if (!ns) out.push(`${at}: its Namespace ${obj.metadata.namespace} is not among the client objects`);
    const listen = portOf(w.flags.get("listen"));
    const admitted = (w.policies ?? []).some((np) => (np.spec.ingress ?? []).some((rule) =>
      (rule.ports ?? []).some((p) => resolvePort(p.port, w.container, "").number === listen) &&
      (rule.from ?? []).some((f) => f.namespaceSelector && !f.podSelector && selectorMatches(f.namespaceSelector, ns?.metadata?.labels ?? {}))));
    if (!admitted) out.push(`${at}: the worker's NetworkPolicy does not admit namespace ${obj.metadata.namespace} (its labels) to port ${listen}`);
    const tokenFile = env.get("HIPR_TOKEN_FILE");
    if (!tokenFile) { out.push(`${at}: HIPR_TOKEN_FILE is not set`); continue; }
    const r = secretFile(tokenFile, c, t.spec, client, obj.metadata.namespace);
    if (r.problem) { out.push(`${at}: HIPR_TOKEN_FILE ${r.problem}`); continue; }
    const token = (secretValue(r.secret, r.key) ?? "").trim();
    const colon = token.indexOf(":");
    const [name, secret] = [token.slice(0, colon), token.slice(colon + 1)];
    if (colon < 0 || !(w.tenants ?? []).some((tn) => tn.name === name && tn.secret === secret))
      out.push(`${at}: the token in Secret ${r.secret.metadata.name} is not TENANT:SECRET of a line of the worker's tenants file`);
  }
}

// Pod Security "restricted" (what the namespaces' enforce label makes the
// API server demand of every pod there).
const kRestrictedVolumes = new Set(["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                                    "persistentVolumeClaim", "projected", "secret"]);
function checkPodSecurity(objects, out) {
  const restricted = new Set(objects.filter((o) => o.kind === "Namespace" &&
    o.metadata.labels?.["pod-security.kubernetes.io/enforce"] === "restricted").map((o) => o.metadata.name));
  for (const obj of objects) {
    if (!restricted.has(obj.metadata?.namespace)) continue;
    for (const t of podTemplates(obj)) {
      const bad = (why) => out.push(`${describe(obj)}: Pod Security "restricted" (namespace ${obj.metadata.namespace}) forbids ${why}`);
      const psc = t.spec.securityContext ?? {};
      if (t.spec.hostNetwork || t.spec.hostPID || t.spec.hostIPC) bad("host namespaces");
      for (const v of t.spec.volumes ?? [])
        if (!Object.keys(v).some((k) => kRestrictedVolumes.has(k))) bad(`volume ${v.name} of its type`);
      for (const c of containersOf(t.spec)) {
        const csc = c.securityContext ?? {};
        if ((csc.runAsNonRoot ?? psc.runAsNonRoot) !== true) bad(`container ${c.name} without runAsNonRoot: true`);
        if ((csc.runAsUser ?? psc.runAsUser) === 0) bad(`container ${c.name} running as uid 0`);
        if (csc.privileged) bad(`privileged container ${c.name}`);
        if (csc.allowPrivilegeEscalation !== false) bad(`container ${c.name} without allowPrivilegeEscalation: false`);
        if (!(csc.capabilities?.drop ?? []).includes("ALL")) bad(`container ${c.name} without capabilities.drop [ALL]`);
        if ((csc.capabilities?.add ?? []).some((cap) => cap !== "NET_BIND_SERVICE")) bad(`container ${c.name} adding capabilities`);
        const seccomp = (csc.seccompProfile ?? psc.seccompProfile)?.type;
        if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") bad(`container ${c.name} without a RuntimeDefault or Localhost seccompProfile`);
        if ((c.ports ?? []).some((p) => p.hostPort)) bad(`hostPort in container ${c.name}`);
      }
    }
  }
}

function checkNamespaces(objects, out, what) {
  const seen = new Set();
  for (const o of objects) {
    const id = `${o.kind} ${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
    if (seen.has(id)) out.push(`${what}: ${id} appears twice`);
    seen.add(id);
    if (o.kind === "Namespace") continue;
    if (!o.metadata?.namespace) out.push(`${describe(o)}: no metadata.namespace`);
    else if (!objects.some((n) => n.kind === "Namespace" && n.metadata.name === o.metadata.namespace))
      out.push(`${describe(o)}: its Namespace is not among the ${what} objects`);
  }
}

export function checkDeployment(worker, client) {
  const out = [];
  checkNamespaces(worker, out, "worker");
  checkPodSecurity(worker, out);
  checkReferences(worker, out);
  checkPlaceholders(worker, out);
  const w = findWorker(worker, out);
  if (w) {
    checkWorkerPod(w, worker, out);
    checkWorkerNetwork(w, worker, out);
  }
  if (client) {
    checkNamespaces(client, out, "client");
    checkPodSecurity(client, out);
    checkReferences(client, out);
    checkPlaceholders(client, out);
    if (w) checkClient(w, client, out);
  }
  return out;
}

// Broken copies for selftest: each must be rejected with `expect` in a message.
const ds = (objs) => objs.find((o) => o.kind === "DaemonSet");
const worker = (objs) => ds(objs).spec.template.spec.containers[0];
const setArg = (objs, flag, value) => {
  const args = worker(objs).args;
  args[args.findIndex((a) => a.startsWith(`--${flag}=`))] = `--${flag}=${value}`;
};
const job = (objs) => objs.find((o) => o.kind === "Job").spec.template.spec.containers[0];
const envOf = (objs, name) => job(objs).env.find((e) => e.name === name);
export const kMutations = [
  { name: "Service selector misses the pods", expect: "selects no pod",
    apply: (w) => { w.find((o) => o.kind === "Service").spec.selector = { "app.kubernetes.io/name": "hipr-wrker" }; } },
  { name: "Service without session affinity", expect: "sessionAffinity ClientIP",
    apply: (w) => { delete w.find((o) => o.kind === "Service").spec.sessionAffinity; } },
  { name: "affinity shorter than the grace period", expect: "sessionAffinity ClientIP",
    apply: (w) => { setArg(w, "resume-grace-s", "900"); } },
  { name: "readiness probe on another port", expect: "readinessProbe port",
    apply: (w) => { worker(w).readinessProbe.httpGet.port = 9465; } },
  { name: "--metrics-listen moved", expect: "is not the --metrics-listen port",
    apply: (w) => { setArg(w, "metrics-listen", "0.0.0.0:9999"); } },
  { name: "--listen port without containerPort", expect: "is the --listen port",
    apply: (w) => { setArg(w, "listen", "0.0.0.0:18516"); } },
  { name: "tenants Secret renamed", expect: "not among the objects",
    apply: (w) => { w.find((o) => o.kind === "Secret").metadata.name = "hipr-tenantz"; } },
  { name: "--auth-file outside the Secret mount", expect: "--auth-file",
    apply: (w) => { setArg(w, "auth-file", "/etc/hipr/tenants"); } },
  { name: "tenants file mounted by subPath", expect: "subPath",
    apply: (w) => { Object.assign(worker(w).volumeMounts[0], { mountPath: "/etc/hipr/auth/tenants", subPath: "tenants" }); } },
  { name: "NetworkPolicy port differs from the Service's", expect: "admits ports",
    apply: (w) => { w.find((o) => o.kind === "NetworkPolicy").spec.ingress[0].ports[0].port = 18516; } },
  { name: "peer ports admitted beside --peer-ports", expect: "exactly --peer-ports",
    apply: (w) => { setArg(w, "peer-ports", "18600-18647"); } },
  { name: "workers admitted to each other on every port", expect: "exactly --peer-ports",
    apply: (w) => { const np = w.find((o) => o.kind === "NetworkPolicy");
                    delete np.spec.ingress.find((r) => r.from?.[0]?.podSelector).ports; } },
  { name: "writable root filesystem", expect: "readOnlyRootFilesystem",
    apply: (w) => { worker(w).securityContext.readOnlyRootFilesystem = false; } },
  { name: "code cache on the read-only root", expect: "--code-cache",
    apply: (w) => { setArg(w, "code-cache", "/opt/hipr/cache"); } },
  { name: "hostPath volume in a restricted namespace", expect: "Pod Security \"restricted\"",
    apply: (w) => { const v = ds(w).spec.template.spec.volumes.find((vol) => vol.name === "code-cache");
                    delete v.emptyDir;
                    v.hostPath = { path: "/var/cache/hipr-worker" }; } },
  { name: "client container that may escalate", expect: "allowPrivilegeEscalation",
    apply: (w, c) => { delete job(c).securityContext.allowPrivilegeEscalation; } },
  { name: "no GPU asked for", expect: "amd.com/gpu",
    apply: (w) => { delete worker(w).resources.limits["amd.com/gpu"]; delete worker(w).resources.requests["amd.com/gpu"]; } },
  { name: "scheduled on any node", expect: "AMD GPU label",
    apply: (w) => { delete ds(w).spec.template.spec.affinity; } },
  { name: "malformed tenant line", expect: "a secret is 16 to 1024",
    apply: (w) => { w.find((o) => o.kind === "Secret").stringData.tenants = "team-a REPLACE-ME\n"; } },
  { name: "client names another Service", expect: "HIPR_SERVER",
    apply: (w, c) => { envOf(c, "HIPR_SERVER").value = "hipr.hipr.svc:18515"; } },
  { name: "client namespace not labelled", expect: "does not admit namespace",
    apply: (w, c) => { delete c.find((o) => o.kind === "Namespace").metadata.labels["hipr.io/client"]; } },
  { name: "client token of no tenant", expect: "is not TENANT:SECRET",
    apply: (w, c) => { c.find((o) => o.kind === "Secret").stringData.token = "team-b:REPLACE-ME-with-openssl-rand-hex-32-team-a"; } },
  { name: "real-looking secret committed", expect: "REPLACE-ME placeholder",
    apply: (w, c) => { c.find((o) => o.kind === "Secret").stringData.token = "team-a:0123456789abcdef0123456789abcdef"; } },
];
