#!/usr/bin/python3
"""Generates the remoting of the HIP functions listed in annotations.txt.

Run with Debian's /usr/bin/python3 (needs python3-clang-15):

  gen_remoting.py --annotations shim_gen/annotations.txt \
                  --declarations shim_gen/decls/rocm6_7.h \
                  --side client|worker --out-dir DIR

For every annotated function it reads the declaration (the installed HIP
headers, then the hand-written --declarations, as gen_exports.py does) and
writes, into DIR:

  api_calls.h       (both sides) the function ids (FNV-1a of the name, so
                    they never change when functions are added) and, per
                    function, the msgpack messages of its inputs and outputs
                    (codec.h structs, field by field).
  api_entries.cc    (client) the exported entry points: check arguments,
                    encode the inputs into one kApiCall frame (a round trip,
                    or fire-and-forget for `post`), write the outputs only
                    on success.
  api_device.h      (worker) ApiDevice: one pure virtual per function, which
                    the sim implements by hand (sim/sim_api.cc) and the hip
                    device by generated code.
  api_dispatch.cc   (worker) DispatchApiCall(): checks the function id, the
                    argument list (exact count, types, ranges, widths) and
                    device ordinals, then calls the ApiDevice.
  hip_api.cc        (worker, hip device only) ApiDevice on the real runtime;
                    functions the installed headers do not declare answer
                    kNotSupported there.

Output depends only on the inputs (sorted, no timestamps): CMake runs it at
build time and nothing generated is checked in.
"""

import argparse
import os
import re
import sys

import clang.cindex as ci

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_exports import CLANG_ARGS, HEADERS, LIBCLANG_CANDIDATES, fail, read_lines  # noqa: E402

TK = ci.TypeKind
# Scalar kinds: (wire type, C type the client's entry point spells).
SCALARS = {
    TK.BOOL: ("bool", "bool"),
    TK.CHAR_S: ("int32_t", "char"), TK.SCHAR: ("int32_t", "signed char"),
    TK.UCHAR: ("uint32_t", "unsigned char"),
    TK.SHORT: ("int32_t", "short"), TK.USHORT: ("uint32_t", "unsigned short"),
    TK.INT: ("int32_t", "int"), TK.UINT: ("uint32_t", "unsigned int"),
    TK.LONG: ("int64_t", "long"), TK.ULONG: ("uint64_t", "unsigned long"),
    TK.LONGLONG: ("int64_t", "long long"), TK.ULONGLONG: ("uint64_t", "unsigned long long"),
    TK.FLOAT: ("float", "float"), TK.DOUBLE: ("double", "double"),
}
WIDTHS = {"int32": 4, "uint32": 4, "int64": 8, "uint64": 8}
ROLES = ("in", "out", "inout", "device", "destroy")
# Struct fields that do not travel: `struct <name> skip=<field>,...` lines.
STRUCT_SKIPS = {}


def fnv1a32(text):
    h = 0x811C9DC5
    for b in text.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def method_name(function):
    """hipDeviceGetLimit -> DeviceGetLimit."""
    return function[3:] if function.startswith("hip") else function


# ---- Annotations -------------------------------------------------------------

class Annotation:
    def __init__(self, name, line):
        self.name = name
        self.line = line
        self.post = False
        self.params = {}  # name -> {"role": ..., "as": ...}


def parse_as(text, where):
    """'uint64' -> ("fixed", 8); 'attr{A:int32,*:uint64}' -> ("by", "attr", {A: 4}, 8)."""
    if text in WIDTHS:
        return ("fixed", WIDTHS[text])
    m = re.fullmatch(r"(\w+)\{([^}]*)\}", text)
    if not m:
        fail(f"{where}: bad as={text}")
    choices, default = {}, None
    for item in m.group(2).split(","):
        key, _, kind = item.partition(":")
        if kind not in WIDTHS:
            fail(f"{where}: bad type '{kind}' in as=")
        if key == "*":
            default = WIDTHS[kind]
        else:
            choices[key] = WIDTHS[kind]
    if default is None:
        fail(f"{where}: as={text} needs a '*:<type>' default")
    return ("by", m.group(1), choices, default)


def read_annotations(path):
    notes = {}
    for number, text in read_lines(path):
        where = f"{path}:{number}"
        fields = text.split()
        if fields[0] == "struct":
            if len(fields) != 3 or not fields[2].startswith("skip="):
                fail(f"{where}: expected 'struct <name> skip=<field>,...'")
            STRUCT_SKIPS[fields[1]] = set(fields[2][len("skip="):].split(","))
            continue
        a = Annotation(fields[0], number)
        if a.name in notes:
            fail(f"{where}: duplicate function {a.name}")
        for field in fields[1:]:
            if field == "post":
                a.post = True
                continue
            parts = field.split(":", 2)
            if len(parts) < 2 or parts[1] not in ROLES:
                fail(f"{where}: expected <param>:<{'|'.join(ROLES)}>[:as=...], got '{field}'")
            spec = {"role": parts[1], "as": None, "count": None, "bad": None, "max_devices": False}
            if len(parts) == 3:
                if parts[2].startswith("as="):
                    spec["as"] = parse_as(parts[2][3:], where)
                elif parts[2].startswith("count="):
                    count, *more = parts[2][len("count="):].split(",")
                    spec["count"] = count
                    for option in more:
                        if option != "max=devices":
                            fail(f"{where}: unknown count option '{option}'")
                        spec["max_devices"] = True
                elif parts[2].startswith("bad=") and parts[1] == "device":
                    spec["bad"] = parts[2][len("bad="):]
                    if not re.fullmatch(r"hipError[A-Za-z]+", spec["bad"]):
                        fail(f"{where}: bad= takes a hipError_t enumerator, got '{spec['bad']}'")
                else:
                    fail(f"{where}: unknown option '{parts[2]}'")
            a.params[parts[0]] = spec
        notes[a.name] = a
    return notes


# ---- Declarations ------------------------------------------------------------

def parse_functions(include_dir, libclang, declarations):
    """{name: (FUNCTION_DECL cursor, declared by the installed headers)} for
    global-scope functions; the first declaration wins."""
    if not ci.Config.loaded:
        ci.Config.set_library_file(libclang)
    source = "".join(f"#include <{h}>\n" for h in HEADERS)
    source += "".join(f'#include "{os.path.abspath(d)}"\n' for d in declarations)
    tu = ci.Index.create().parse("hipr_remoting.cc", args=CLANG_ARGS + [f"-I{include_dir}"],
                                 unsaved_files=[("hipr_remoting.cc", source)])
    errors = [str(d) for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        fail("libclang could not parse the HIP headers:", errors)
    decl_paths = {os.path.abspath(d) for d in declarations}
    found = {}

    def walk(cursor):
        for child in cursor.get_children():
            if child.kind in (ci.CursorKind.LINKAGE_SPEC, ci.CursorKind.UNEXPOSED_DECL):
                walk(child)
            elif child.kind == ci.CursorKind.FUNCTION_DECL and child.spelling not in found:
                file = child.location.file.name if child.location.file else ""
                found[child.spelling] = (child, os.path.abspath(file) not in decl_paths)

    walk(tu.cursor)
    return found


def enum_values(enum_type):
    decl = enum_type.get_canonical().get_declaration()
    return {c.spelling: c.enum_value for c in decl.get_children()
            if c.kind == ci.CursorKind.ENUM_CONSTANT_DECL}


def is_handle(t):
    """A pointer to an incomplete struct: an opaque runtime handle."""
    c = t.get_canonical()
    if c.kind != TK.POINTER:
        return False
    p = c.get_pointee().get_canonical()
    return p.kind == TK.RECORD and p.get_declaration().is_definition() is False


# Structs met in parameters: {C struct name: [(field, kind, wire type)]},
# nested structs first. They travel field by field as nested arrays (Wire*
# messages in api_calls.h), never as raw C bytes.
STRUCTS = {}


def struct_wire(name):
    return f"::hipr::api::Wire_{name}"


def register_struct(c, where):
    decl = c.get_declaration()
    name = decl.spelling
    if name in STRUCTS:
        return name
    fields = []
    skip = STRUCT_SKIPS.get(name, set())
    for f in decl.get_children():
        if f.kind != ci.CursorKind.FIELD_DECL or f.spelling in skip:
            continue
        kind, wire, _ = value_kind(f.type, f"{where}: field {name}::{f.spelling}", allow_handle=False)
        fields.append((f.spelling, kind, wire))
    if not fields:
        fail(f"{where}: struct {name} has no fields to send")
    STRUCTS[name] = fields
    return name


def value_kind(t, where, allow_handle=True):
    """How a by-value type travels: ('scalar'|'enum'|'handle'|'struct', wire
    type, client C type)."""
    c = t.get_canonical()
    if c.kind == TK.RECORD and c.get_declaration().is_definition():
        name = register_struct(c, where)
        return ("struct", struct_wire(name), name)
    if c.kind in SCALARS:
        wire, cname = SCALARS[c.kind]
        return ("scalar", wire, cname)
    if c.kind == TK.ENUM:
        under = c.get_declaration().enum_type.get_canonical()
        wire, cname = SCALARS.get(under.kind, ("int32_t", "int"))
        return ("enum", wire, cname)
    if is_handle(t) and allow_handle:
        return ("handle", "uint64_t", "void*")
    fail(f"{where}: type '{t.spelling}' cannot be generated yet; hand-write this function")


class Param:
    pass


class Function:
    pass


def describe(name, note, cursor, in_headers):
    where = f"{name} (annotations.txt:{note.line})"
    if cursor.result_type.get_canonical().spelling != "hipError_t":
        fail(f"{where}: does not return hipError_t")
    f = Function()
    f.name, f.method, f.post, f.in_headers = name, method_name(name), note.post, in_headers
    f.id = fnv1a32(name)
    f.params = []
    names = [a.spelling for a in cursor.get_arguments()]
    unknown = sorted(set(note.params) - set(names))
    if unknown:
        fail(f"{where}: no parameter named " + ", ".join(unknown) + f" (has {', '.join(names)})")
    for arg in cursor.get_arguments():
        p = Param()
        p.name, p.type = arg.spelling, arg.type
        spec = note.params.get(p.name, {"role": None, "as": None, "count": None, "bad": None, "max_devices": False})
        p.role, p.as_, p.count = spec["role"], spec["as"], spec["count"]
        p.bad, p.max_devices = spec["bad"], spec["max_devices"]
        c = arg.type.get_canonical()
        pointer = c.kind == TK.POINTER and not is_handle(arg.type)
        if pointer:
            if p.role not in ("in", "out", "inout"):
                fail(f"{where}: pointer parameter '{p.name}' needs :in, :out or :inout")
            pointee = c.get_pointee()
            if pointee.get_canonical().kind in (TK.CHAR_S, TK.SCHAR, TK.UCHAR, TK.CHAR_U):
                fail(f"{where}: '{p.name}' is a string or byte buffer, which cannot be generated yet; "
                     "hand-write this function")
            if pointee.kind == TK.VOID:
                if p.as_ is None:
                    fail(f"{where}: void* parameter '{p.name}' needs :as=<type>")
                p.kind, p.wire, p.ctype = "as", "uint64_t", "void*"
                p.target = None
            else:
                kind, wire, cname = value_kind(arg.type.get_pointee(), where)
                p.kind, p.wire = "ptr_" + kind, wire
                p.ctype = ("void**" if kind == "handle" else cname + "*")
                if pointee.is_const_qualified():
                    p.ctype = "const " + p.ctype
                p.target = arg.type.get_pointee().spelling  # For the hip device.
                if p.count is not None:
                    if p.role != "in" or kind == "handle":
                        fail(f"{where}: count= is for :in arrays of values or structs ('{p.name}')")
                    p.kind, p.elem, p.wire = "array", kind, f"std::vector<{wire}>"
                    p.elem_wire = wire
        else:
            if p.role in ("in", "out", "inout"):
                fail(f"{where}: '{p.name}' is not a pointer; only pointers take :{p.role}")
            if p.as_ is not None or p.count is not None:
                fail(f"{where}: only pointer parameters take as= or count=")
            p.kind, p.wire, p.ctype = value_kind(arg.type, where)
            if p.role == "destroy" and p.kind != "handle":
                fail(f"{where}: only handles take :destroy ('{p.name}')")
            if p.role == "device" and p.kind != "scalar":
                fail(f"{where}: device parameter '{p.name}' must be an int")
        p.sends = not pointer or p.role in ("in", "inout")
        p.receives = pointer and p.role in ("out", "inout")
        f.params.append(p)
    for p in f.params:
        if p.as_ and p.as_[0] == "by":
            sel = next((q for q in f.params if q.name == p.as_[1]), None)
            if sel is None or sel.kind != "enum":
                fail(f"{where}: as= of '{p.name}' names '{p.as_[1]}', not an enum parameter")
            values = enum_values(sel.type)
            bad = sorted(set(p.as_[2]) - set(values))
            if bad:
                fail(f"{where}: {sel.type.spelling} has no enumerator " + ", ".join(bad))
            p.as_ = ("by", sel.name, {values[k]: w for k, w in p.as_[2].items()}, p.as_[3])
    for p in f.params:
        if p.kind == "array":
            n = next((q for q in f.params if q.name == p.count), None)
            if n is None or n.kind != "scalar" or not n.wire.startswith("uint"):
                fail(f"{where}: count= of '{p.name}' must name an unsigned integer parameter")
    if f.post and any(p.receives for p in f.params):
        fail(f"{where}: a post (fire-and-forget) function cannot have outputs")
    return f


def width_expr(p, prefix):
    """C++ expression for the byte width of an `as` parameter."""
    if p.as_[0] == "fixed":
        return str(p.as_[1])
    _, sel, choices, default = p.as_
    expr = str(default)
    for value, width in sorted(choices.items(), reverse=True):
        expr = f"({prefix}{sel} == {value} ? {width} : {expr})"
    return expr


# ---- Output ------------------------------------------------------------------

def header(inputs):
    return [f"// Generated by shim_gen/gen_remoting.py from {inputs}. Do not edit."]


def fields_struct(name, fields, comment):
    out = [f"// {comment}", f"struct {name} {{"]
    out += [f"  {wire} {field}{{}};" for wire, field in fields]
    out.append(f"  HIPR_FIELDS({', '.join(field for _, field in fields)})")
    out.append("};")
    return out


def write_calls_h(funcs, inputs):
    out = header(inputs) + [
        "// Ids and argument messages of the generated calls (kApiCall, docs/protocol.md).",
        "#pragma once", "", "#include <cstddef>", "#include <cstdint>", "#include <vector>", "",
        '#include "protocol/codec.h"', "", "namespace hipr::api {", "",
        "// The outputs of a call that failed, or of an unknown function.",
        "struct NoOutputs {", "  HIPR_FIELDS()", "};", ""]
    for f in funcs:
        out.append(f"inline constexpr uint32_t k{f.method} = 0x{f.id:08x};  // {f.name}")
    out.append("")
    for name, fields in STRUCTS.items():
        wires = [(w.replace("::hipr::api::", ""), fname) for fname, _, w in fields]
        out += fields_struct(f"Wire_{name}", wires, f"{name}, field by field.")
        out.append("")
    for f in funcs:
        ins = [(p.wire, p.name) for p in f.params if p.sends]
        outs = [(p.wire, p.name) for p in f.params if p.receives]
        out += fields_struct(f"{f.method}In", ins, f"{f.name}: inputs, in declaration order.")
        out.append(f"inline constexpr size_t k{f.method}Args = {len(ins)};")
        out += fields_struct(f"{f.method}Out", outs, f"{f.name}: outputs.")
        out.append("")
    out += ["}  // namespace hipr::api"]
    return out


def converters(static):
    """ToWire/FromWire for every struct, in dependency order."""
    out = []
    for name, fields in STRUCTS.items():
        out.append(f"[[maybe_unused]] {static}void ToWire(const {name}& c, {struct_wire(name)}* w) {{")
        for fname, kind, wire in fields:
            if kind == "struct":
                out.append(f"  ToWire(c.{fname}, &w->{fname});")
            else:
                out.append(f"  w->{fname} = static_cast<{wire}>(c.{fname});")
        out.append("}")
        out.append(f"[[maybe_unused]] {static}void FromWire(const {struct_wire(name)}& w, {name}* c) {{")
        for fname, kind, wire in fields:
            if kind == "struct":
                out.append(f"  FromWire(w.{fname}, &c->{fname});")
            else:
                out.append(f"  c->{fname} = static_cast<decltype(c->{fname})>(w.{fname});")
        out.append("}")
    return out


def write_entries_cc(funcs, inputs):
    out = header(inputs) + [
        "// The generated exported entry points (client_stub/api/api_generated.h).",
        '#include "client_stub/api/api_generated.h"', "",
        "#include <cstring>", "",
        '#include "api_calls.h"', "",
        "using namespace hipr;", "using namespace hipr::client;", "", "namespace {", ""]
    out += converters("") + ["", "}  // namespace", ""]
    for f in funcs:
        sig = ", ".join(f"{p.ctype} {p.name}" for p in f.params)
        cname = f"hipr_gen_{f.name}"
        out.append(f'HIPR_EXPORT hipError_t {cname}({sig}) __asm__("{f.name}");')
        out.append(f"hipError_t {cname}({sig}) {{")
        out.append(f'  return ApiCall("{f.name}", [&]() -> hipError_t {{')
        out.append("    Remote* s = LiveSession();")
        out.append("    if (s == nullptr) return hipErrorNoDevice;")
        out.append("    int current = 0;")
        out.append("    if (hipError_t e = CurrentDeviceOf(*s, &current); e != hipSuccess) return e;")
        for p in f.params:
            if p.kind.startswith("ptr_") or p.kind in ("as", "array"):
                out.append(f"    if ({p.name} == nullptr) return hipErrorInvalidValue;")
            if p.kind == "array":
                out.append(f"    if ({p.count} > wire::kMaxMsgpackArray) return hipErrorInvalidValue;  // Cannot travel.")
                if p.max_devices:
                    out.append(f"    if ({p.count} > static_cast<size_t>(s->device_count())) return hipErrorInvalidDevice;")
            if p.role == "device" and p.bad:
                out.append(f"    if (CheckDevice(*s, {p.name}) != hipSuccess) return {p.bad};")
            elif p.role == "device":
                out.append(f"    if (hipError_t e = CheckDevice(*s, {p.name}); e != hipSuccess) return e;")
        # With several workers (session/remote.h) the call goes to the worker
        # of the device it names, and every device it names must be there.
        devices = [p for p in f.params if p.role == "device"]
        route = devices[0].name if devices else "current"
        for p in devices[1:]:
            out.append(f"    if (!s->SameWorker({route}, {p.name})) return hipErrorInvalidDevice;  // Other workers.")
        out.append(f"    api::{f.method}In in;")
        for p in f.params:
            if not p.sends:
                continue
            if p.kind == "handle":
                out.append(f"    in.{p.name} = reinterpret_cast<uint64_t>({p.name});")
            elif p.kind == "ptr_handle":
                out.append(f"    in.{p.name} = reinterpret_cast<uint64_t>(*{p.name});")
            elif p.kind == "ptr_struct":
                out.append(f"    ToWire(*{p.name}, &in.{p.name});")
            elif p.kind == "struct":
                out.append(f"    ToWire({p.name}, &in.{p.name});")
            elif p.kind == "array":
                out.append(f"    in.{p.name}.resize({p.count});")
                out.append(f"    for (size_t i = 0; i < {p.count}; ++i)")
                if p.elem == "struct":
                    out.append(f"      ToWire({p.name}[i], &in.{p.name}[i]);")
                else:
                    out.append(f"      in.{p.name}[i] = static_cast<{p.elem_wire}>({p.name}[i]);")
            elif p.kind.startswith("ptr_"):
                out.append(f"    in.{p.name} = static_cast<{p.wire}>(*{p.name});")
            elif p.kind == "as":
                out.append(f"    in.{p.name} = ReadWidth({p.name}, {width_expr(p, '')});")
            elif p.role == "device":
                out.append(f"    in.{p.name} = static_cast<{p.wire}>(s->LocalOf({p.name}));")
            else:
                out.append(f"    in.{p.name} = static_cast<{p.wire}>({p.name});")
        if f.post:
            out.append(f"    return PostGenerated(*s, api::k{f.method}, {route}, in);")
        else:
            out.append(f"    api::{f.method}Out out;")
            out.append(f"    if (hipError_t e = CallGenerated(*s, api::k{f.method}, {route}, in, &out);"
                       " e != hipSuccess) return e;")
            for p in f.params:
                if not p.receives:
                    continue
                if p.kind == "ptr_handle":
                    out.append(f"    *{p.name} = reinterpret_cast<void*>(out.{p.name});")
                elif p.kind == "as":
                    out.append(f"    WriteWidth({p.name}, {width_expr(p, '')}, out.{p.name});")
                elif p.kind == "ptr_struct":
                    out.append(f"    FromWire(out.{p.name}, {p.name});")
                else:
                    base = p.ctype.rstrip("*")
                    out.append(f"    *{p.name} = static_cast<{base}>(out.{p.name});")
            out.append("    return hipSuccess;")
        out.append("  });")
        out.append("}")
        out.append("")
    return out


def write_device_h(funcs, inputs):
    out = header(inputs) + [
        "// ApiDevice: the generated calls as the worker's device sees them.",
        "//",
        "// Called from the session's replay thread only, after DispatchApiCall",
        "// checked the argument list and every device ordinal (ctx.device, the",
        "// calling client thread's current device, and :device parameters).",
        "// Outputs are read only when the call returns ok.",
        "#pragma once", "", "#include <memory>", "", "#include <msgpack.hpp>", "",
        '#include "api_calls.h"', '#include "protocol/codec.h"', '#include "protocol/status.h"', "",
        "namespace hipr::worker {", "",
        "struct ApiContext {",
        "  int device = 0;        // The calling client thread's current device.",
        "  int device_count = 0;  // Of this session.",
        "};", "",
        "class ApiDevice {", " public:", "  virtual ~ApiDevice() = default;"]
    for f in funcs:
        out.append(f"  // {f.name}{' (fire-and-forget)' if f.post else ''}")
        out.append(f"  virtual Status {f.method}(const ApiContext& ctx, const api::{f.method}In& in, "
                   f"api::{f.method}Out* out) = 0;")
    out += ["};", "",
            "// Decodes and runs one kApiCall. Returns not ok (a protocol error: the",
            "// session ends) when `args` is not the exact argument list of function",
            "// `fn`; otherwise *call is the call's status and *reply holds the reply",
            "// body ([error] or [0, outputs]). An unknown `fn` is kNotSupported.",
            "Status DispatchApiCall(ApiDevice& dev, uint32_t fn, const ApiContext& ctx,",
            "                       const msgpack::object& args, codec::BodyWriter* reply, Status* call);",
            "",
            "// Whether `fn` is a generated function that travels fire-and-forget.",
            "bool ApiCallIsPost(uint32_t fn);",
            "",
            "// The hip device's ApiDevice (generated hip_api.cc, in the hip module only).",
            "std::unique_ptr<ApiDevice> NewHipApi();",
            "",
            "}  // namespace hipr::worker"]
    return out


def write_dispatch_cc(funcs, inputs):
    out = header(inputs) + [
        '#include "api_device.h"', "", "#include <string>", "",
        '#include "worker_service/session/api_dispatch_util.h"', "",
        "namespace hipr::worker {", "",
        "bool ApiCallIsPost(uint32_t fn) {", "  switch (fn) {"]
    for f in funcs:
        if f.post:
            out.append(f"    case api::k{f.method}:")
    out += ["      return true;" if any(f.post for f in funcs) else "", "    default:",
            "      return false;", "  }", "}", "",
            "Status DispatchApiCall(ApiDevice& dev, uint32_t fn, const ApiContext& ctx,",
            "                       const msgpack::object& args, codec::BodyWriter* reply, Status* call) {",
            "  switch (fn) {"]
    for f in funcs:
        out.append(f"    case api::k{f.method}: {{  // {f.name}")
        out.append(f"      api::{f.method}In in;")
        out.append(f'      HIPR_RETURN_IF_ERROR(DecodeArgs(args, api::k{f.method}Args, &in, "{f.name}"));')
        for p in f.params:
            if p.kind == "as" and p.sends:
                out.append(f'      HIPR_RETURN_IF_ERROR(CheckWidth(in.{p.name}, {width_expr(p, "in.")}, '
                           f'"{f.name}", "{p.name}"));')
        for p in f.params:
            if p.kind == "array":
                out.append(f"      if (in.{p.name}.size() != in.{p.count})")
                out.append(f'        return ProtocolError("{f.name}: {p.name} has " + std::to_string(in.{p.name}.size()) +')
                out.append(f'                             " elements, {p.count} says " + std::to_string(in.{p.count}));')
        out.append(f"      api::{f.method}Out out;")
        checks = [p for p in f.params if p.role == "device"]
        if checks:
            cond = " && ".join(f"ValidDevice(ctx.device_count, in.{p.name}, call)" for p in checks)
            out.append(f"      if ({cond}) *call = dev.{f.method}(ctx, in, &out);")
        else:
            out.append(f"      *call = dev.{f.method}(ctx, in, &out);")
        out.append("      EncodeReply(*call, out, reply);")
        out.append("      return Status::Ok();")
        out.append("    }")
    out += ["    default:",
            '      *call = Status(StatusCode::kNotSupported, "unknown generated function id " + std::to_string(fn));',
            "      EncodeReply(*call, api::NoOutputs{}, reply);",
            "      return Status::Ok();", "  }", "}", "", "}  // namespace hipr::worker"]
    return out


def write_hip_cc(funcs, inputs):
    out = header(inputs) + [
        "// ApiDevice on the real HIP runtime. Compiled into the hip device module only.",
        "#include <hip/hip_runtime_api.h>", "", "#include <memory>", "#include <vector>", "",
        '#include "api_device.h"', '#include "worker_service/hip/hip_api_util.h"', "",
        "// The worker replays what the application calls, deprecated or not.",
        '#pragma GCC diagnostic ignored "-Wdeprecated-declarations"', "",
        "namespace hipr::worker {", "namespace {", ""]
    out += converters("") + ["",
        "class HipApi final : public ApiDevice {", " public:"]
    for f in funcs:
        out.append(f"  Status {f.method}(const ApiContext& ctx, const api::{f.method}In& in, "
                   f"api::{f.method}Out* out) override {{")
        if not f.in_headers:
            out.append("    (void)ctx, (void)in, (void)out;")
            out.append(f'    return NotInThisRuntime("{f.name}");')
            out.append("  }")
            continue
        out.append("    HIPR_RETURN_IF_ERROR(HipStatus(hipSetDevice(ctx.device), \"hipSetDevice\"));")
        args = []
        for p in f.params:
            if p.kind == "handle":
                out.append(f"    {p.type.spelling} {p.name} = nullptr;")
                out.append(f'    HIPR_RETURN_IF_ERROR(handles_.Find("{p.type.spelling}", in.{p.name}, &{p.name}));')
                args.append(p.name)
            elif p.kind in ("scalar", "enum"):
                args.append(f"static_cast<{p.type.spelling}>(in.{p.name})")
            elif p.kind == "struct":
                out.append(f"    {p.type.spelling} {p.name}{{}};")
                out.append(f"    FromWire(in.{p.name}, &{p.name});")
                args.append(p.name)
            elif p.kind == "array":
                elem = p.target.replace("const ", "")
                out.append(f"    std::vector<{elem}> {p.name}(in.{p.name}.size());")
                out.append(f"    for (size_t i = 0; i < {p.name}.size(); ++i)")
                if p.elem == "struct":
                    out.append(f"      FromWire(in.{p.name}[i], &{p.name}[i]);")
                else:
                    out.append(f"      {p.name}[i] = static_cast<{elem}>(in.{p.name}[i]);")
                args.append(f"{p.name}.data()")
            elif p.kind == "ptr_struct":
                out.append(f"    {p.target.replace('const ', '')} {p.name}{{}};")
                if p.sends:
                    out.append(f"    FromWire(in.{p.name}, &{p.name});")
                args.append(f"&{p.name}")
            elif p.kind == "as":
                init = f"in.{p.name}" if p.sends else "0"
                out.append(f"    uint64_t {p.name} = {init};  // Little-endian: 4- and 8-byte values alike.")
                args.append(f"&{p.name}")
            elif p.kind == "ptr_handle":
                out.append(f"    {p.target} {p.name} = nullptr;")
                if p.sends:
                    out.append(f'    HIPR_RETURN_IF_ERROR(handles_.Find("{p.target}", in.{p.name}, &{p.name}));')
                args.append(f"&{p.name}")
            else:
                init = f"static_cast<{p.target}>(in.{p.name})" if p.sends else "{}"
                out.append(f"    {p.target} {p.name} = {init};")
                args.append(f"&{p.name}")
        out.append(f'    HIPR_RETURN_IF_ERROR(HipStatus({f.name}({", ".join(args)}), "{f.name}"));')
        for p in f.params:
            if p.role == "destroy":
                out.append(f'    handles_.Forget("{p.type.spelling}", in.{p.name});')
        for p in f.params:
            if not p.receives:
                if p.kind == "handle" or p.sends is False:
                    pass
                continue
            if p.kind == "ptr_handle":
                out.append(f'    out->{p.name} = handles_.Export("{p.target}", {p.name});')
            elif p.kind == "as":
                out.append(f"    out->{p.name} = {width_expr(p, 'in.')} == 4 ? ({p.name} & 0xffffffffu) : {p.name};")
            elif p.kind == "ptr_struct":
                out.append(f"    ToWire({p.name}, &out->{p.name});")
            else:
                out.append(f"    out->{p.name} = static_cast<{p.wire}>({p.name});")
        out.append("    return Status::Ok();")
        out.append("  }")
    out += ["", " private:", "  HandleIds handles_;", "};", "", "}  // namespace", "",
            "std::unique_ptr<ApiDevice> NewHipApi() { return std::make_unique<HipApi>(); }", "",
            "}  // namespace hipr::worker"]
    return out


def write_file(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--annotations", required=True)
    parser.add_argument("--declarations", action="append", default=[])
    parser.add_argument("--side", choices=("client", "worker"), required=True)
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--include-dir", default="/usr/include")
    parser.add_argument("--runtime-include-dir",
                        help="worker side: write only hip_api.cc, for a hip device module built against the "
                             "HIP headers in this directory (a newer ROCm's); the functions they declare are "
                             "called, the others answer NotInThisRuntime")
    parser.add_argument("--libclang")
    args = parser.parse_args()
    libclang = args.libclang or next((p for p in LIBCLANG_CANDIDATES if os.path.exists(p)), None)
    if libclang is None:
        fail("no libclang found; install libclang1-15 or pass --libclang")

    notes = read_annotations(args.annotations)
    found = parse_functions(args.include_dir, libclang, args.declarations)
    missing = sorted(n for n in notes if n not in found)
    if missing:
        fail("annotated functions not declared in the HIP headers or --declarations:", missing)
    funcs = [describe(n, notes[n], *found[n]) for n in sorted(notes)]
    if args.runtime_include_dir:
        if args.side != "worker":
            fail("--runtime-include-dir is for --side worker")
        declared = parse_functions(args.runtime_include_dir, libclang, [])
        for f in funcs:
            f.in_headers = f.name in declared
    ids = {}
    for f in funcs:
        if f.id == 0 or f.id in ids:
            fail(f"function id 0x{f.id:08x} of {f.name} is 0 or also {ids.get(f.id)}'s; rename nothing, "
                 "pick another id scheme")
        ids[f.id] = f.name

    inputs = ", ".join(os.path.basename(p) for p in [args.annotations] + args.declarations)
    os.makedirs(args.out_dir, exist_ok=True)
    outputs = {"api_calls.h": write_calls_h}
    if args.runtime_include_dir:
        # The interface (api_calls.h, api_device.h) is the one the worker core was built with.
        outputs = {"hip_api.cc": write_hip_cc}
    elif args.side == "client":
        outputs["api_entries.cc"] = write_entries_cc
    else:
        outputs.update({"api_device.h": write_device_h, "api_dispatch.cc": write_dispatch_cc,
                        "hip_api.cc": write_hip_cc})
    for name, writer in outputs.items():
        write_file(os.path.join(args.out_dir, name), writer(funcs, inputs))


if __name__ == "__main__":
    main()
