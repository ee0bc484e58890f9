#!/usr/bin/python3
"""Generates the client stub's exported ABI from the libamdhip64 symbol lists.

Run with Debian's /usr/bin/python3 (needs python3-clang-15):

  gen_exports.py --symbols client_stub/abi/libamdhip64.so.5.symbols \
                 --symbols client_stub/abi/libamdhip64.so.6.symbols \
                 --symbols client_stub/abi/libamdhip64.so.7.symbols \
                 --declarations shim_gen/decls/rocm6_7.h \
                 --handwritten client_stub/abi/handwritten.txt \
                 --annotations shim_gen/annotations.txt --out-dir DIR

The stub exports the union of the lists (one file serves every major); a
name in two lists must sit in the same version node in both.

Writes into DIR:
  exports.map              GNU ld version script: every symbol in its node.
  unsupported_exports.cc   one HIPR_UNSUPPORTED_ENTRY (client_stub/api/unsupported.h)
                           per symbol that is neither hand-written nor listed
                           in --annotations (those get generated remoting:
                           gen_remoting.py).

Every symbol that is not hand-written must return hipError_t according to the
installed HIP headers, or for functions those lack (6.x/7.x additions)
according to the hand-written --declarations headers, parsed after them with
libclang: such an entry point can ignore its arguments and just return
hipErrorNotSupported. Anything else (not declared, or another return type)
must be listed in handwritten.txt and implemented by hand; the generator
fails listing those names. It also fails if handwritten.txt names a symbol no
list exports.

Version-script notes (checked with GNU ld 2.40, gold and lld 15 on a toy
library; shim_gen/check_exports.sh verifies the real stub):
  * Nodes are chained in version order (hip_4.3 inherits hip_4.2, ...), as
    `readelf -V` shows for Debian's libamdhip64.so.5.
  * C++-mangled names are listed verbatim, outside any `extern "C++"` block:
    there they are matched literally against the mangled ELF name.
  * There is no `local: *;`. The stub also exports `dlopen` (defined by hand,
    default visibility), which must stay unversioned; a symbol that no
    pattern matches keeps version index 1 (*global*, shown unversioned by
    `nm -D --with-symbol-versions`), whereas `local: *` would hide it.
    Everything else is hidden by -fvisibility=hidden and
    -Wl,--exclude-libs,ALL, except one leak those cannot stop: libstdc++
    declares namespace std with default visibility, so out-of-line template
    instantiations the stub uses (e.g. std::vector<T>::_M_realloc_insert)
    would be exported as weak symbols. The map therefore has `local: _Z*;`:
    the exact global names listed above it take precedence over that
    wildcard, so the five mangled HIP symbols stay exported.
  * gold (not the default linker) additionally exports unversioned
    __bss_start, _edata and _end; check_exports.sh reports them.
"""

import argparse
import collections
import glob
import os
import re
import sys

import clang.cindex as ci

# Headers that declare the exported functions. amd_hip_runtime.h declares the
# amd_dbgapi_* functions, hip_runtime_prof.h the activity-callback functions,
# hiprtc.h the hiprtc* functions (all exported by libamdhip64.so.5 5.2).
# __hipRegister*, __hipUnregisterFatBinary, __gnu_{f2h,h2f}_ieee and
# hip_impl::hipLaunchKernelGGLImpl are declared in no usable installed header
# (amd_detail/functional_grid_launch.hpp is a stale HCC header that does not
# parse); they must be hand-written.
HEADERS = [
    "hip/hip_runtime_api.h",
    "hip/hip_ext.h",
    "hip/amd_detail/amd_hip_runtime.h",
    "hip/amd_detail/hip_runtime_prof.h",
    "hip/hiprtc.h",
]
CLANG_ARGS = ["-x", "c++", "-std=c++17", "-D__HIP_PLATFORM_AMD__"]
LIBCLANG_CANDIDATES = ["/usr/lib/llvm-15/lib/libclang-15.so.1"] + sorted(
    glob.glob("/usr/lib/llvm-*/lib/libclang-*.so.1"), reverse=True)


def fail(message, names=()):
    lines = [f"gen_exports.py: error: {message}"] + [f"  {n}" for n in names]
    sys.exit("\n".join(lines))


def read_lines(path):
    """Yields (line number, text) of non-empty lines with '#' comments removed."""
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            text = line.split("#", 1)[0].strip()
            if text:
                yield number, text


def read_symbols(path):
    """Returns {symbol: version node} from the '<name> <node>' symbols file."""
    symbols = {}
    for number, text in read_lines(path):
        fields = text.split()
        if len(fields) != 2 or not re.fullmatch(r"hip_\d+\.\d+", fields[1]):
            fail(f"{path}:{number}: expected '<name> hip_X.Y', got '{text}'")
        if fields[0] in symbols:
            fail(f"{path}:{number}: duplicate symbol {fields[0]}")
        symbols[fields[0]] = fields[1]
    return symbols


def union_symbols(paths):
    """The union of the symbol files: {symbol: node}; fails when a name sits
    in different nodes in two files."""
    union = {}
    conflicts = []
    for path in paths:
        for symbol, node in read_symbols(path).items():
            if union.setdefault(symbol, node) != node:
                conflicts.append(f"{symbol}: {union[symbol]} and {node} ({os.path.basename(path)})")
    if conflicts:
        fail("symbols in different version nodes across the lists:", conflicts)
    return union


KINDS = ("remoted", "local", "unsupported")


def read_handwritten(path, symbols=None):
    """Returns {symbol: kind} from handwritten.txt ('<symbol> <kind>' lines);
    with `symbols`, fails on a name that no list exports."""
    kinds = {}
    for number, text in read_lines(path):
        fields = text.split()
        if len(fields) != 2 or fields[1] not in KINDS:
            fail(f"{path}:{number}: expected '<symbol> {'|'.join(KINDS)}', got '{text}'")
        if fields[0] in kinds:
            fail(f"{path}:{number}: duplicate name {fields[0]}")
        kinds[fields[0]] = fields[1]
    if symbols is not None:
        unknown = sorted(kinds.keys() - symbols.keys())
        if unknown:
            fail(f"{path} names symbols that no libamdhip64 list exports:", unknown)
    return kinds


def read_annotated(path, symbols=None, handwritten=()):
    """The function names annotations.txt lists (generated remoting); with
    `symbols`, fails on a name no list exports or that is also hand-written."""
    names = set()
    for number, text in read_lines(path):
        name = text.split()[0]
        if name == "struct":  # 'struct <name> skip=...': how a struct travels.
            continue
        if name in names:
            fail(f"{path}:{number}: duplicate function {name}")
        names.add(name)
    if symbols is not None:
        unknown = sorted(names - symbols.keys())
        if unknown:
            fail(f"{path} names symbols that no libamdhip64 list exports:", unknown)
        both = sorted(names & set(handwritten))
        if both:
            fail(f"{path}: these are also in handwritten.txt (pick one):", both)
    return names


def parse_headers(include_dir, libclang, declarations=()):
    """Returns two maps from the HIP headers (then the extra declaration
    headers) to sets of (canonical, spelled) return types: by ELF (mangled)
    name, and by plain name for functions at global scope."""
    ci.Config.set_library_file(libclang)
    source = "".join(f"#include <{h}>\n" for h in HEADERS)
    source += "".join(f'#include "{os.path.abspath(d)}"\n' for d in declarations)
    args = CLANG_ARGS + [f"-I{include_dir}"]
    tu = ci.Index.create().parse("hipr_exports.cc", args=args,
                                 unsaved_files=[("hipr_exports.cc", source)])
    errors = [str(d) for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        fail("libclang could not parse the HIP headers:", errors)

    by_elf_name = collections.defaultdict(set)
    by_plain_name = collections.defaultdict(set)

    def walk(cursor, at_global_scope):
        for child in cursor.get_children():
            # extern "C" { ... } shows up as LINKAGE_SPEC or, in libclang 15,
            # as UNEXPOSED_DECL; neither opens a new scope.
            if child.kind in (ci.CursorKind.LINKAGE_SPEC, ci.CursorKind.UNEXPOSED_DECL):
                walk(child, at_global_scope)
            elif child.kind == ci.CursorKind.NAMESPACE:
                walk(child, False)
            elif child.kind == ci.CursorKind.FUNCTION_DECL:
                ret = (child.result_type.get_canonical().spelling,
                       child.result_type.spelling)
                by_elf_name[child.mangled_name].add(ret)
                if at_global_scope and child.linkage == ci.LinkageKind.EXTERNAL:
                    by_plain_name[child.spelling].add(ret)

    walk(tu.cursor, True)
    return by_elf_name, by_plain_name


def return_types(symbol, by_elf_name, by_plain_name):
    """The declared return types of `symbol`, or an empty set if undeclared.

    Matched by ELF name first. A plain (unmangled) symbol may also match a
    global function declared without extern "C": hip_runtime_prof.h declares
    hipInitActivityCallback & co. with C++ linkage although the library
    exports them unmangled."""
    if symbol in by_elf_name:
        return by_elf_name[symbol]
    if not symbol.startswith("_Z"):
        return by_plain_name.get(symbol, set())
    return set()


def check_generated(symbols, handwritten, by_elf_name, by_plain_name):
    """Fails unless every symbol to generate is declared returning hipError_t."""
    problems = []
    for symbol in sorted(symbols.keys() - handwritten):
        types = return_types(symbol, by_elf_name, by_plain_name)
        if not types:
            problems.append(f"{symbol}: not declared in the HIP headers")
        elif {canonical for canonical, _ in types} != {"hipError_t"}:
            spelled = ", ".join(sorted(s for _, s in types))
            problems.append(f"{symbol}: returns {spelled}")
    if problems:
        fail("these symbols cannot be generated as 'unsupported' entry points; "
             "implement them by hand and list them in handwritten.txt:", problems)


def version_key(node):
    major, minor = node[len("hip_"):].split(".")
    return int(major), int(minor)


STUB_MAP_NOTE = ["   No 'local: *': unlisted default-visibility symbols (dlopen) stay",
                 "   unversioned. 'local: _Z*' hides libstdc++ template instantiations;",
                 "   the exact mangled names listed as global take precedence."]


def write_map(path, symbols, header, local="_Z*", note=STUB_MAP_NOTE):
    """A GNU ld version script: every symbol in its node, nodes chained in
    version order, `local` hidden (in the first node)."""
    by_node = collections.defaultdict(list)
    for symbol, node in symbols.items():
        by_node[node].append(symbol)
    nodes = sorted(by_node, key=version_key)
    out = [f"/* {header}"] + list(note) + ["*/"]
    for i, node in enumerate(nodes):
        out.append(f"{node} {{")
        out.append("  global:")
        out.extend(f"    {symbol};" for symbol in sorted(by_node[node]))
        if i == 0:
            out.append("  local:")
            out.append(f"    {local};")
        parent = f" {nodes[i - 1]}" if i > 0 else ""
        out.append(f"}}{parent};")
    write_file(path, out)


def write_unsupported(path, symbols, handwritten, inputs):
    out = [f"// Generated by shim_gen/gen_exports.py from {inputs}. Do not edit.",
           "// Exported HIP entry points hipr does not implement: each logs its",
           "// name once and returns hipErrorNotSupported (client_stub/api/unsupported.h).",
           "",
           '#include "client_stub/api/unsupported.h"',
           ""]
    for index, symbol in enumerate(sorted(symbols.keys() - handwritten)):
        out.append(f'HIPR_UNSUPPORTED_ENTRY(hipr_unsupported_{index}, "{symbol}")'
                   f"  // {symbols[symbol]}")
    write_file(path, out)


def write_file(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--symbols", required=True, action="append",
                        help="a libamdhip64.so.N.symbols file (repeatable: the union is exported)")
    parser.add_argument("--declarations", action="append", default=[],
                        help="a header declaring functions the HIP headers lack (repeatable)")
    parser.add_argument("--handwritten", required=True, help="handwritten.txt")
    parser.add_argument("--annotations", help="annotations.txt (functions with generated remoting)")
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--include-dir", default="/usr/include",
                        help="directory holding hip/hip_runtime_api.h")
    parser.add_argument("--libclang", help="path of libclang.so (default: llvm-15's)")
    args = parser.parse_args()

    libclang = args.libclang or next(
        (p for p in LIBCLANG_CANDIDATES if os.path.exists(p)), None)
    if libclang is None:
        fail("no libclang found; install libclang1-15 or pass --libclang")

    symbols = union_symbols(args.symbols)
    handwritten = set(read_handwritten(args.handwritten, symbols))
    if args.annotations:
        handwritten |= read_annotated(args.annotations, symbols, handwritten)
    by_elf_name, by_plain_name = parse_headers(args.include_dir, libclang, args.declarations)
    check_generated(symbols, handwritten, by_elf_name, by_plain_name)

    inputs = ", ".join(os.path.basename(p) for p in args.symbols + args.declarations + [args.handwritten])
    os.makedirs(args.out_dir, exist_ok=True)
    write_map(os.path.join(args.out_dir, "exports.map"), symbols,
              f"Generated by shim_gen/gen_exports.py from {inputs}. Do not edit.")
    write_unsupported(os.path.join(args.out_dir, "unsupported_exports.cc"),
                      symbols, handwritten, inputs)


if __name__ == "__main__":
    main()
