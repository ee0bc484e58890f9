// Unknown-field check for Kubernetes objects.
//
// kubernetes-models' validators check types, enums and required fields but
// let unknown fields through, and so does kubectl's client side; the API
// server then rejects them (field validation "Strict") or, with older
// clients, drops them without a word: `readOnlyRootFileSystem: true` would
// silently leave the root filesystem writable. This walks an object against
// the field lists of the package's TypeScript declarations (one generated
// .d.ts per model, every field written as `"name"?: Type;`), resolving
// nested models through their import lines.
//
// Contract: new KnownFields(dir) where dir holds node_modules/; then
// unknownFields(obj) returns ["spec.template.spec.containers[0].bogus", ...]
// for an object whose apiVersion/kind has a model, and throws for one that
// has none. Declarations are parsed once and cached; not thread-aware (Node).

import fs from "node:fs";
import path from "node:path";

const kScalar = { kind: "scalar" };  // string, number, literal union, any
const kAny = { kind: "any" };        // free-form (RawExtension, JSON): not walked

export class KnownFields {
  constructor(npmDir) {
    this.modules = path.join(npmDir, "node_modules");
    this.cache = new Map();  // .d.ts path -> type node
  }

  // The .d.ts of a top-level kind: kubernetes-models/<group>/<version>/<Kind>.d.ts,
  // the core group being plain v1/.
  declarationOf(apiVersion, kind) {
    const file = path.join(this.modules, "kubernetes-models", apiVersion, `${kind}.d.ts`);
    if (!fs.existsSync(file)) throw new Error(`no declaration for ${apiVersion} ${kind}`);
    return file;
  }

  unknownFields(obj) {
    const root = this.load(this.declarationOf(obj.apiVersion, obj.kind));
    if (root.kind !== "object") throw new Error(`cannot read the fields of ${obj.apiVersion} ${obj.kind}`);
    const found = [];
    walk(obj, root, "", found);
    return found;
  }

  // Parses one declaration file into a type node: {kind: "object", props}
  // for an interface, kScalar for a type alias, kAny for an empty interface
  // or one that declares neither.
  load(file) {
    if (this.cache.has(file)) return this.cache.get(file);
    const node = { kind: "object", props: new Map() };
    this.cache.set(file, node);  // Before recursing: models refer to themselves (JSONSchemaProps).
    const text = fs.readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
    const imports = new Map();
    for (const m of text.matchAll(/^import \{ (\w+) \} from "([^"]+)";$/gm)) imports.set(m[1], m[2]);
    const body = /^export interface \w+(?: extends [\w, ]+)? \{\n([\s\S]*?)^\}/m.exec(text);
    if (!body) {
      Object.assign(node, /^export declare type \w+ = /m.test(text) ? kScalar : kAny);
      return node;
    }
    // A field starts at four spaces and a quoted name; a map type runs on
    // over the following, deeper lines.
    let current = null;
    for (const line of body[1].split("\n")) {
      const m = /^ {4}"([^"]+)"\??: (.*)$/.exec(line);
      if (m) {
        current = { name: m[1], text: m[2] };
        node.props.set(current.name, current);
      } else if (current && line.trim()) {
        current.text += " " + line.trim();
      }
    }
    // An empty interface is a free-form object (RawExtension, JSON, FieldsV1).
    if (node.props.size === 0) Object.assign(node, kAny);
    for (const prop of node.props.values()) {
      prop.type = this.typeOf(prop.text.replace(/;\s*$/, "").trim(), imports, path.dirname(file));
      delete prop.text;
    }
    return node;
  }

  typeOf(text, imports, dir) {
    let m = /^Array<(.*)>$/.exec(text);
    if (m) return { kind: "array", item: this.typeOf(m[1], imports, dir) };
    m = /^\{ \[key: string\]: (.*?);? \}$/.exec(text);
    if (m) return { kind: "map", value: this.typeOf(m[1], imports, dir) };
    if (imports.has(text)) return this.load(this.resolve(imports.get(text), dir));
    return kScalar;
  }

  resolve(spec, dir) {
    const base = spec.startsWith(".") ? path.join(dir, spec) : path.join(this.modules, spec);
    return base + ".d.ts";
  }
}

function walk(value, type, where, found) {
  if (value === null || value === undefined) return;
  if (type.kind === "array" && Array.isArray(value)) {
    value.forEach((v, i) => walk(v, type.item, `${where}[${i}]`, found));
  } else if (type.kind === "map" && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) walk(v, type.value, `${where}.${k}`, found);
  } else if (type.kind === "object" && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) {
      const prop = type.props.get(k);
      const at = where ? `${where}.${k}` : k;
      if (prop) walk(v, prop.type, at, found);
      else found.push(at);
    }
  }
  // Anything else is a scalar, or a type mismatch the schema check reports.
}
