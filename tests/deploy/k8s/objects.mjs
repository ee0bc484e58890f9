// Checks of one Kubernetes object on its own that the schemas cannot
// express but the API server enforces (names, port ranges, probe ports that
// name no container port, modes, extended resources), plus the one hipr
// rule every Secret volume follows (never writable by others: the worker
// refuses such a tenants file). Also the helpers consistency.mjs shares.
//
// Each check returns a list of problems (strings); none means the object is
// fine. Pure functions of their arguments.

export const kDns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const kDns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const kLabelName = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
// IANA_SVC_NAME: what a named port may be.
const kPortName = /^(?=.*[a-z])(?!.*--)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function describe(obj) {
  const ns = obj?.metadata?.namespace ? `${obj.metadata.namespace}/` : "";
  return `${obj?.kind ?? "?"} ${ns}${obj?.metadata?.name ?? "?"}`;
}

// Every pod template of an object, with where it sits: [{spec, labels, where}].
export function podTemplates(obj) {
  const s = obj.spec ?? {};
  switch (obj.kind) {
    case "Pod":
      return [{ spec: s, labels: obj.metadata?.labels ?? {}, where: "spec" }];
    case "Deployment": case "DaemonSet": case "StatefulSet": case "ReplicaSet": case "Job":
      return [{ spec: s.template?.spec ?? {}, labels: s.template?.metadata?.labels ?? {},
                annotations: s.template?.metadata?.annotations ?? {}, where: "spec.template.spec" }];
    case "CronJob": {
      const t = s.jobTemplate?.spec?.template;
      return [{ spec: t?.spec ?? {}, labels: t?.metadata?.labels ?? {}, where: "spec.jobTemplate.spec.template.spec" }];
    }
    default:
      return [];
  }
}

export function containersOf(podSpec) {
  return [...(podSpec.initContainers ?? []), ...(podSpec.containers ?? [])];
}

// A port field (int or IANA name) resolved against a container's ports:
// {number} or {problem}.
export function resolvePort(port, container, what) {
  if (typeof port === "number") {
    if (Number.isInteger(port) && port >= 1 && port <= 65535) return { number: port };
    return { problem: `${what} ${port} is not a port number (1 to 65535)` };
  }
  if (typeof port !== "string" || !kPortName.test(port) || port.length > 15)
    return { problem: `${what} ${JSON.stringify(port)} is neither a port number (1 to 65535) nor a port name` };
  if (!container) return { name: port };
  const named = (container.ports ?? []).find((p) => p.name === port);
  if (!named) return { problem: `${what} "${port}" names no port of container ${container.name}` };
  return { number: named.containerPort, name: port };
}

// Kubernetes quantities ("500m", "4Gi", 2) as numbers, NaN when malformed.
export function quantity(q) {
  if (typeof q === "number") return q;
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(String(q));
  const scale = { "": 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
                  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
  if (!m || !(m[2] in scale)) return NaN;
  return Number(m[1]) * scale[m[2]];
}

function checkMetadata(obj) {
  const out = [];
  const md = obj.metadata ?? {};
  const labelKinds = new Set(["Namespace", "Service"]);
  if (typeof md.name !== "string") out.push("metadata.name is missing");
  else if (labelKinds.has(obj.kind) ? !kDns1123Label.test(md.name) || md.name.length > 63
                                    : !kDns1123Subdomain.test(md.name) || md.name.length > 253)
    out.push(`metadata.name "${md.name}" is not a DNS-1123 ${labelKinds.has(obj.kind) ? "label" : "name"}`);
  if (md.namespace !== undefined && !kDns1123Label.test(String(md.namespace)))
    out.push(`metadata.namespace "${md.namespace}" is not a DNS-1123 label`);
  const labelMaps = [["metadata.labels", md.labels]];
  for (const t of podTemplates(obj)) labelMaps.push([`${t.where.replace(/\.spec$/, "")}.metadata.labels`, t.labels]);
  for (const [where, labels] of labelMaps) {
    for (const [k, v] of Object.entries(labels ?? {})) {
      const [prefix, name] = k.includes("/") ? k.split("/", 2) : [null, k];
      if ((prefix !== null && !kDns1123Subdomain.test(prefix)) || !kLabelName.test(name) || name.length > 63)
        out.push(`${where}: "${k}" is not a label key`);
      if (typeof v === "string" && v !== "" && (!kLabelName.test(v) || v.length > 63))
        out.push(`${where}: "${v}" (for ${k}) is not a label value`);
    }
  }
  return out;
}

function checkMode(mode, where) {
  if (mode === undefined) return [];
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) return [`${where} ${mode} is not a file mode (0 to 0777)`];
  return [];
}

function checkPodSpec(spec, where) {
  const out = [];
  const volumes = new Map();
  for (const v of spec.volumes ?? []) {
    if (volumes.has(v.name)) out.push(`${where}.volumes: "${v.name}" appears twice`);
    volumes.set(v.name, v);
    for (const [src, field] of [["secret", "defaultMode"], ["configMap", "defaultMode"]]) {
      const s = v[src];
      if (!s) continue;
      const modes = [[s[field], `${where}.volumes[${v.name}].${src}.${field}`],
                     ...(s.items ?? []).map((it) => [it.mode, `${where}.volumes[${v.name}].${src}.items[${it.key}].mode`])];
      for (const [mode, at] of modes) {
        out.push(...checkMode(mode, at));
        if (src === "secret" && Number.isInteger(mode) && (mode & 0o002))
          out.push(`${at} 0${mode.toString(8)} leaves the files writable by others (hipr-worker refuses such an --auth-file)`);
      }
    }
  }
  const names = new Set();
  for (const c of containersOf(spec)) {
    const at = `${where}.containers[${c.name}]`;
    if (names.has(c.name)) out.push(`${at}: container name appears twice`);
    names.add(c.name);
    if (typeof c.name === "string" && !kDns1123Label.test(c.name)) out.push(`${at}: name is not a DNS-1123 label`);
    const portNames = new Set();
    for (const p of c.ports ?? []) {
      const r = resolvePort(p.containerPort, null, `${at}.ports containerPort`);
      if (r.problem) out.push(r.problem);
      if (p.name !== undefined) {
        if (!kPortName.test(p.name) || p.name.length > 15) out.push(`${at}.ports: "${p.name}" is not a port name`);
        if (portNames.has(p.name)) out.push(`${at}.ports: "${p.name}" appears twice`);
        portNames.add(p.name);
      }
    }
    for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"]) {
      const action = c[probe]?.httpGet ?? c[probe]?.tcpSocket;
      if (!action) continue;
      const r = resolvePort(action.port, c, `${at}.${probe} port`);
      if (r.problem) out.push(r.problem);
    }
    for (const m of c.volumeMounts ?? [])
      if (!volumes.has(m.name)) out.push(`${at}.volumeMounts: "${m.name}" is no volume of the pod`);
    const { requests = {}, limits = {} } = c.resources ?? {};
    for (const [res, q] of Object.entries({ ...requests, ...limits }))
      if (Number.isNaN(quantity(q))) out.push(`${at}.resources: ${res} "${q}" is not a quantity`);
    for (const res of new Set([...Object.keys(requests), ...Object.keys(limits)])) {
      const extended = res.includes("/") && !res.startsWith("kubernetes.io/");
      if (extended && res in requests && quantity(requests[res]) !== quantity(limits[res]))
        out.push(`${at}.resources: ${res} needs requests equal to limits (an extended resource)`);
      if (!extended && res in requests && res in limits && quantity(requests[res]) > quantity(limits[res]))
        out.push(`${at}.resources: ${res} requests exceed limits`);
    }
  }
  return out;
}

function selectorMatches(selector, labels) {
  for (const [k, v] of Object.entries(selector?.matchLabels ?? {})) if (labels?.[k] !== v) return false;
  for (const e of selector?.matchExpressions ?? []) {
    const has = labels && e.key in labels;
    if (e.operator === "In" && !(has && e.values.includes(labels[e.key]))) return false;
    if (e.operator === "NotIn" && has && e.values.includes(labels[e.key])) return false;
    if (e.operator === "Exists" && !has) return false;
    if (e.operator === "DoesNotExist" && has) return false;
  }
  return true;
}
export { selectorMatches };

function checkService(svc) {
  const out = [];
  const ports = svc.spec?.ports ?? [];
  const names = new Set();
  for (const p of ports) {
    const r = resolvePort(p.port, null, "spec.ports port");
    if (r.problem || typeof p.port !== "number") out.push(r.problem ?? `spec.ports port ${JSON.stringify(p.port)} must be a number`);
    if (p.targetPort !== undefined) {
      const t = resolvePort(p.targetPort, null, "spec.ports targetPort");
      if (t.problem) out.push(t.problem);
    }
    if (ports.length > 1 && !p.name) out.push(`spec.ports: port ${p.port} needs a name (the Service has several)`);
    if (p.name && names.has(p.name)) out.push(`spec.ports: "${p.name}" appears twice`);
    names.add(p.name);
  }
  return out;
}

function checkNetworkPolicy(np) {
  const out = [];
  for (const dir of ["ingress", "egress"])
    for (const rule of np.spec?.[dir] ?? [])
      for (const p of rule.ports ?? []) {
        if (p.port === undefined) continue;
        const r = resolvePort(p.port, null, `spec.${dir} port`);
        if (r.problem) out.push(r.problem);
      }
  return out;
}

// The API server's own rules for one object (after the schema check passed).
export function checkObject(obj) {
  const out = [...checkMetadata(obj)];
  for (const t of podTemplates(obj)) out.push(...checkPodSpec(t.spec, t.where));
  const sel = obj.spec?.selector;
  if (["Deployment", "DaemonSet", "StatefulSet", "ReplicaSet"].includes(obj.kind)) {
    if (!sel || (!sel.matchLabels && !sel.matchExpressions)) out.push("spec.selector is missing");
    else if (!selectorMatches(sel, obj.spec?.template?.metadata?.labels))
      out.push("spec.selector does not match spec.template.metadata.labels");
  }
  if (obj.kind === "Service") out.push(...checkService(obj));
  if (obj.kind === "NetworkPolicy") out.push(...checkNetworkPolicy(obj));
  return out;
}
