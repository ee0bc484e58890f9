#!/usr/bin/python3
"""Writes the source of a kernel twin from a program's .hip file.

A twin is the device side of a HIP translation unit compiled for the host
(twin_abi.h, hipr_twin_prelude.h). This tool parses the .hip file with
libclang as HIP (device side, as hipcc does for the target, gfx90a unless
--target says otherwise), keeps kernels,
__device__ functions, device variables and the types, templates and
constants they need, drops host functions and host globals (so no host code
or static initialiser of the program ever runs in the worker), rewrites
device variables so they live in device memory the sim binds, and appends the
descriptor the sim loads: every kernel and variable of the code object's
metadata (from `hipr-inspect --json`), explicit instantiations for its
template kernels, and the code object's SHA-256. A kernel of the code object
that the source cannot express is an error naming it. The twin source
defines the macros the device compile predefines for the target
(__HIP_DEVICE_COMPILE__, __gfx90a__, ...; twin_macros.py), so the program's
#if branches are those of its code object; a program that uses the device's
long double layout macros, which a host compile cannot honour, is refused.
The program's own
headers (every file it includes from outside the system include paths) are
rewritten the same way, into copies next to the output; errors in a twin
point at the original files and lines (#line).

  twin_rewrite.py rewrite --source F.hip --binary PROG --inspect hipr-inspect \
      --output twin.cc [--target gfx90a] [--manifest twin.json] [--depfile twin.d] [-I dir] [-D def]
      [-- program compile flags]
  twin_rewrite.py build --twin-source twin.cc --manifest twin.json \
      --library twin.so --output-dir DIR --stamp NAME.twin [-- flags]
  twin_rewrite.py install --library twin.so --manifest twin.json \
      --output-dir DIR --stamp NAME.twin

`build` compiles the twin source with clang++-15 and installs it: checks the
library (every template kernel's symbol is defined) and copies it to
DIR/<sha256>.so, the name the sim looks for; `install` does the second half
for a library built otherwise. A source that needs no twin (no device code
in the binary, or no kernels in a source of a several-source program) gets a
manifest saying so, and `build` prints that and writes only the stamp.
The program's compile flags are sorted by classify_flags: those that change
what device code means (-I, -D, -std=, -ffast-math, ...) reach the parse and
the compile, the rest are dropped; -fgpu-rdc is refused. hipr-twin is the
command for users; cmake/HiprSimTwin.cmake calls rewrite and build.
Run with Debian's /usr/bin/python3 (python3-clang-15).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
import twin_macros  # noqa: E402
from twin_source import (  # noqa: E402
    CursorKind,
    SourceFiles,
    TwinError,
    attributes,
    in_system_header,
    is_constexpr,
    is_linkage_block,
    namespaces,
    parse_hip,
    qualified_name,
    skipped_ranges,
    walk_scope,
)

ANON = "(anonymous namespace)::"
CLASS_KINDS = (CursorKind.STRUCT_DECL, CursorKind.CLASS_DECL, CursorKind.UNION_DECL, CursorKind.CLASS_TEMPLATE,
               CursorKind.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION)
TYPE_KINDS = CLASS_KINDS + (CursorKind.ENUM_DECL, CursorKind.TYPEDEF_DECL, CursorKind.TYPE_ALIAS_DECL,
                            CursorKind.TYPE_ALIAS_TEMPLATE_DECL)
SCOPE_KINDS = (CursorKind.NAMESPACE, CursorKind.TRANSLATION_UNIT, CursorKind.LINKAGE_SPEC)
# Template arguments a twin cannot spell: lambdas and unnamed types.
UNNAMEABLE = re.compile(r"'lambda|\{lambda|'unnamed|\{unnamed|\$_\d")
# Compiler-made symbols of a code object that no source declares.
INTERNAL_VARIABLE = re.compile(r"^(\.|__hip_|__oclc_|__ockl_|llvm\.)")


# ---- The program's compile flags -------------------------------------------
# A twin is built with the flags that change what its source means on the
# device: given to the parse, to the device-macro probe and to the twin's
# host compile. Flags that only steer the host program's build (optimisation,
# warnings, debug info, targets, dependency files, linking) are dropped.

# Taking their value as the next argument, or joined (-Idir, -DX=1).
BOTH_WITH_VALUE = ("-I", "-D", "-U", "-isystem", "-iquote", "-idirafter", "-include", "-imacros")
BOTH_EXACT = {"-ffast-math", "-fno-fast-math", "-funsafe-math-optimizations", "-fno-unsafe-math-optimizations",
              "-ffinite-math-only", "-fno-finite-math-only", "-fno-math-errno", "-fmath-errno",
              "-fno-signed-zeros", "-fsigned-zeros", "-freciprocal-math", "-fno-reciprocal-math",
              "-fassociative-math", "-fno-associative-math", "-fhonor-nans", "-fno-honor-nans",
              "-fhonor-infinities", "-fno-honor-infinities", "-fno-rtti", "-frtti", "-fchar8_t", "-fno-char8_t",
              "-fsigned-char", "-funsigned-char"}
BOTH_PREFIX = ("-std=", "-ffp-contract=", "-ffp-model=")
IGNORED_WITH_VALUE = {"-o", "-MF", "-MT", "-MQ", "-x", "-L", "-l", "-Xlinker", "-rpath", "--rocm-path",
                      "-Xclang", "-mllvm"}
IGNORED_EXACT = {"-c", "-S", "-E", "-shared", "-static", "-fPIC", "-fpic", "-fPIE", "-fpie", "-pie", "-no-pie",
                 "-pthread", "-MD", "-MMD", "-MP", "-M", "-MM", "-pipe", "-v", "-pedantic", "-pedantic-errors",
                 "-fno-gpu-rdc", "-fexceptions", "-fno-exceptions", "-fopenmp", "-save-temps", "--genco",
                 "-fno-omit-frame-pointer", "-fomit-frame-pointer", "-ffunction-sections", "-fdata-sections",
                 "-w", "-nogpulib", "-nogpuinc"}
IGNORED_PREFIX = ("-O", "-g", "-W", "--offload-arch=", "--amdgpu-target=", "-fgpu-default-stream=", "-march=",
                  "-mtune=", "-mcpu=", "-fvisibility", "-fcolor-diagnostics", "-fno-color-diagnostics",
                  "-fdiagnostics-", "-fstack-protector", "-fno-stack-protector", "-fsanitize", "-fno-sanitize",
                  "-l", "-L", "--rocm-path=", "-fuse-ld=", "-flto", "-fno-lto", "--hip-link", "-rdynamic")


def classify_flags(flags):
    """(flags the twin takes, flags dropped, flags not known): a program's
    compile flags as hipcc got them. -fgpu-rdc is refused: its device code
    is linked across translation units, and a twin stands for one."""
    both, dropped, unknown = [], [], []
    i = 0
    while i < len(flags):
        f = flags[i]
        nxt = [flags[i + 1]] if i + 1 < len(flags) else []
        if f == "-fgpu-rdc":
            raise TwinError("-fgpu-rdc (device code linked across translation units) is not supported: a twin "
                            "stands for the code object of one translation unit; build without it")
        if f in BOTH_WITH_VALUE:
            if not nxt:
                raise TwinError("compile flag %s needs a value" % f)
            both += [f] + nxt
            i += 2
            continue
        if f in IGNORED_WITH_VALUE:
            dropped += [f] + nxt
            i += 2
            continue
        if f.startswith(BOTH_WITH_VALUE) or f in BOTH_EXACT or f.startswith(BOTH_PREFIX):
            both.append(f)
        elif f in IGNORED_EXACT or f.startswith(IGNORED_PREFIX) or f.startswith("-Wl,") or not f.startswith("-"):
            dropped.append(f)
        else:
            unknown.append(f)
        i += 1
    return both, dropped, unknown


def run_inspect(tool, binary, target):
    out = subprocess.run([tool, binary, "--json", "--target", target], capture_output=True, text=True)
    if out.returncode != 0:
        raise TwinError("%s %s failed: %s" % (tool, binary, out.stderr.strip()))
    return json.loads(out.stdout)


def code_object_entries(inspect, target):
    processor = target.split(":")[0]
    entries = []
    for bundle in inspect.get("bundles", []):
        for entry in bundle.get("entries", []):
            co = entry.get("code_object")
            if co and entry.get("target", "").split(":")[0] == processor:
                entries.append(entry)
    return entries


def demangle(names):
    if not names:
        return {}
    out = subprocess.run(["llvm-cxxfilt-15"], input="\n".join(names) + "\n", check=True, capture_output=True,
                         text=True).stdout.splitlines()
    return dict(zip(names, out))


def split_template_kernel(demangled, qual):
    """'void ns::k<float, 4>(float*, int)' and 'ns::k' -> ('void', 'float, 4', 'float*, int')."""
    text = demangled.replace(ANON, "")
    key = " " + qual + "<"
    at = text.find(key)
    if at < 0:
        return None
    ret = text[:at].strip()
    i = at + len(key)
    depth, parens, start = 1, 0, i
    while i < len(text) and depth:
        c = text[i]
        if c == "(":
            parens += 1
        elif c == ")":
            parens -= 1
        elif c == "<" and parens == 0:
            depth += 1
        elif c == ">" and parens == 0:
            depth -= 1
        i += 1
    if depth:
        return None
    args = text[start:i - 1]
    rest = text[i:]
    if not (rest.startswith("(") and rest.endswith(")")):
        return None
    return ret, args, rest[1:-1]


class Rewriter:
    def __init__(self, source, clang_args, target):
        self.source = os.path.realpath(source)
        self.tu = parse_hip(self.source, clang_args, target)
        self.files = SourceFiles(self.tu, self.source)
        self.kernels = {}      # mangled -> cursor (functions and specializations)
        self.templates = []    # (qualified name without '::', cursor)
        self.device_vars = []  # cursors, in source order
        self.kept = []         # top-level cursors kept
        self.types = []        # top-level type declarations (kept if needed)
        self.declarators = []  # top-level variables and typedefs (resolve_declarations)
        self.stripped = set()  # (path, offset) of dropped host-only members

    # ---- Classification ------------------------------------------------------

    def classify(self):
        walk_scope(self.tu.cursor, self.files, self._top_level)

    def _top_level(self, c):
        k = c.kind
        attrs = attributes(c)
        if k in (CursorKind.VAR_DECL, CursorKind.TYPEDEF_DECL):
            self.declarators.append(c)
        if k in (CursorKind.FUNCTION_DECL, CursorKind.FUNCTION_TEMPLATE, CursorKind.CXX_METHOD,
                 CursorKind.CONSTRUCTOR, CursorKind.DESTRUCTOR, CursorKind.CONVERSION_FUNCTION):
            if CursorKind.CUDAGLOBAL_ATTR in attrs:
                if k == CursorKind.FUNCTION_TEMPLATE:
                    self.templates.append((qualified_name(c).lstrip(":"), c))
                elif c.is_definition() or c.get_num_template_arguments() > 0:
                    self.kernels.setdefault(c.mangled_name, c)
            elif CursorKind.CUDADEVICE_ATTR not in attrs and not is_constexpr(c):
                self.files.blank(c)
                return
        elif k == CursorKind.VAR_DECL:
            if attrs & {CursorKind.CUDADEVICE_ATTR, CursorKind.CUDACONSTANT_ATTR} or self._managed(c) or \
                    self._texture_reference(c):
                self.device_vars.append(c)
            elif CursorKind.CUDASHARED_ATTR in attrs:
                if c.storage_class.name == "EXTERN":
                    raise TwinError(self.files.where(c) + ": extern __shared__ at namespace scope is not supported "
                                    "in twins; declare it inside the kernel")
            elif not (is_constexpr(c) or self._constant_scalar(c)):
                self.files.blank(c)  # A host global, maybe with a static initialiser.
                return
        elif k in TYPE_KINDS:
            if k in CLASS_KINDS:
                self._strip_host_members(c)
            self.types.append(c)  # Kept if device code needs it (prune_types).
            return
        self.kept.append(c)

    # ---- Types device code needs ------------------------------------------------

    def prune_types(self, kernel_names):
        """Drops the program's types that no kept declaration uses (host
        types may hold host-only members such as a hipStream_t). A type is
        needed when kept code refers to it, directly or through another
        needed type, or when a kernel of the code object names it (a
        template kernel instantiated with it)."""
        by_key = {}
        for t in self.types:
            by_key.setdefault(self._key(t), []).append(t)
        words = set(re.findall(r"[A-Za-z_]\w*", " ".join(kernel_names)))
        needed = set()
        work = [c for c in self.kept if c.kind not in (CursorKind.STATIC_ASSERT, CursorKind.USING_DECLARATION)]
        for key, decls in by_key.items():
            if decls[0].spelling in words:
                needed.add(key)
                work.extend(decls)
        while work:
            for key in self._types_used(work.pop(), by_key):
                if key not in needed:
                    needed.add(key)
                    work.extend(by_key[key])
        for key, decls in by_key.items():
            if key in needed:
                self.kept.extend(decls)
            else:
                for t in decls:
                    self.files.blank(t)
        for c in list(self.kept):  # `using ns::HostType;`, static_assert(sizeof(HostType) ...).
            if c.kind in (CursorKind.STATIC_ASSERT, CursorKind.USING_DECLARATION) and \
                    any(key not in needed for key in self._types_used(c, by_key)):
                self.files.blank(c)
                self.kept.remove(c)

    @staticmethod
    def _key(c):
        try:
            return qualified_name(c)
        except TwinError:
            return None

    def _types_used(self, c, by_key):
        keys = set()
        stack = [c]
        while stack:
            node = stack.pop()
            if (self.files.path_of(node), node.extent.start.offset) in self.stripped:
                continue  # A host member that is dropped, with all it uses.
            stack.extend(node.get_children())
            r = node.referenced if node.kind.is_reference() or node.kind.is_expression() else None
            while r is not None and r.semantic_parent is not None and \
                    r.semantic_parent.kind not in SCOPE_KINDS and not is_linkage_block(r.semantic_parent):
                r = r.semantic_parent
            if r is not None and r.kind in TYPE_KINDS:
                key = self._key(r)
                if key in by_key:
                    keys.add(key)
        return keys

    @staticmethod
    def _constant_scalar(c):
        t = c.type
        if not t.is_const_qualified():
            return False
        kind = t.get_canonical().kind.name
        return kind in ("BOOL", "CHAR_U", "UCHAR", "CHAR16", "CHAR32", "USHORT", "UINT", "ULONG", "ULONGLONG",
                        "CHAR_S", "SCHAR", "WCHAR", "SHORT", "INT", "LONG", "LONGLONG", "FLOAT", "DOUBLE", "ENUM")

    @staticmethod
    def _texture_reference(c):
        """A `texture<T, dim, mode>` variable (HIP's texture_types.h): a device
        variable without a qualifier, holding a textureReference."""
        d = c.type.get_canonical().get_declaration()
        return d is not None and d.spelling == "texture" and d.location.file is not None and \
            d.location.file.name.endswith("texture_types.h") and in_system_header(d.location)

    def _managed(self, c):
        """A `__managed__` variable: libclang shows the attribute as an
        unexposed one whose text is the keyword."""
        return any(a.kind == CursorKind.UNEXPOSED_ATTR and self.files.text(a) == "__managed__"
                   for a in c.get_children())

    def _strip_host_members(self, cls):
        """Drops host-only member functions (device code cannot call them).
        Special members that decide the object model (destructors, copy and
        move constructors and assignments) and virtual functions stay."""
        for m in cls.get_children():
            k = m.kind
            if k in (CursorKind.STRUCT_DECL, CursorKind.CLASS_DECL, CursorKind.UNION_DECL, CursorKind.CLASS_TEMPLATE,
                     CursorKind.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION):
                self._strip_host_members(m)
                continue
            if k not in (CursorKind.CXX_METHOD, CursorKind.FUNCTION_TEMPLATE, CursorKind.CONSTRUCTOR,
                         CursorKind.CONVERSION_FUNCTION):
                continue
            if attributes(m) & {CursorKind.CUDADEVICE_ATTR, CursorKind.CUDAGLOBAL_ATTR} or is_constexpr(m):
                continue
            if k == CursorKind.CONSTRUCTOR and (m.is_copy_constructor() or m.is_move_constructor()):
                continue
            words = self.files.head_tokens(m)
            if m.spelling.startswith("operator=") or "virtual" in words or "default" in words or "delete" in words:
                continue
            if self.files.is_user(m):
                self.files.blank(m)
                self.stripped.add((self.files.path_of(m), m.extent.start.offset))

    # ---- Declarations with several declarators ----------------------------------

    def resolve_declarations(self):
        """`static int a = 0, b;`, `typedef struct {...} T, *PT;`, `const
        int k = 1, *p = &k;`, `struct S {...} s;`: libclang gives each
        declarator a cursor whose extent runs from the start of the
        declaration, so dropping one as a whole would drop those before it
        and any type the declaration defines. After classify() and
        prune_types(): typedefs of one declaration are kept together; a
        dropped variable after a kept one goes as `, declarator`; a dropped
        first declarator with kept ones after it cannot be expressed and is
        refused; a type defined in a dropped declaration stays if device
        code needs it."""
        groups = {}
        for c in self.declarators:
            if c not in self.device_vars:  # Rewritten whole (rewrite_variables).
                groups.setdefault((self.files.path_of(c), c.extent.start.offset), []).append(c)
        for decls in groups.values():
            decls.sort(key=lambda c: c.extent.end.offset)
            dropped = [self.files.is_blanked(c) for c in decls]
            if all(dropped):
                self._keep_defined_type(decls)
            elif not any(dropped):
                continue
            elif decls[0].kind == CursorKind.TYPEDEF_DECL:
                for c in decls:
                    self.files.unblank(c)
            elif dropped[0]:
                kept = [c.spelling for c, d in zip(decls, dropped) if not d]
                raise TwinError("%s: the declaration of %s also declares %s, which the twin keeps; a twin cannot drop "
                                "%s (a host variable) alone: declare it separately" % (
                                    self.files.where(decls[0]), decls[0].spelling, ", ".join(kept),
                                    decls[0].spelling))
            else:
                for prev, c, d in zip(decls, decls[1:], dropped[1:]):
                    if d:
                        self.files.blank(c, [(prev.extent.end.offset, c.extent.end.offset)])

    def _keep_defined_type(self, decls):
        """All of decls are dropped: keep a type their declaration defines
        (`static struct S {...} s;` -> `struct S {...} ;`) if it is kept."""
        for t in decls[0].get_children():
            if t.kind in TYPE_KINDS and t.is_definition() and not self.files.is_blanked(t) and \
                    any(self._same(t, k) for k in self.kept):
                head = (self.files.blank_start(decls[0]), t.extent.start.offset)
                for c in decls:
                    self.files.blank(c, [head, (t.extent.end.offset, c.extent.end.offset)])
                return

    @staticmethod
    def _same(a, b):
        return a.kind == b.kind and a.extent.start.offset == b.extent.start.offset and \
            a.extent.end.offset == b.extent.end.offset and a.location.file.name == b.location.file.name

    # ---- Macros the twin cannot honour ---------------------------------------------

    def check_layout_macros(self, macros):
        """Refuses a program whose kept code or #if conditions use the
        device's type layout macros (twin_macros.py)."""
        uses = twin_macros.refused_uses(macros, self.files, skipped_ranges(self.tu), self.files.dropped)
        if uses:
            raise TwinError("%s uses macros of the device's type layout, which a twin cannot honour: it is compiled "
                            "for the host, where long double is the 80-bit x87 type, not the device's 64-bit "
                            "double:\n  %s" % (self.source, "\n  ".join(uses)))

    # ---- Device variables, dynamic shared memory ------------------------------

    def rewrite_variables(self, metadata_vars):
        """Returns [(code object name, C++ name of the initial-bytes storage)]
        in descriptor order."""
        table = []
        usrs = {c.get_usr(): c for c in self.device_vars}
        groups = {}  # One declaration may declare several (`__device__ int x, y;`).
        for c in self.device_vars:
            groups.setdefault((self.files.path_of(c), c.extent.start.offset), []).append(c)
        for decls in groups.values():
            decls.sort(key=lambda c: c.extent.end.offset)
            managed = self._managed(decls[0])
            entries = [(c, self._variable_entry(c, managed, metadata_vars, usrs, table)) for c in decls]
            self.files.rewrite_device_variables(entries, managed)
        for name in sorted(metadata_vars - {n for n, _ in table}):
            if not INTERNAL_VARIABLE.search(name):
                print("twin_rewrite: note: the code object's variable %s is not declared in %s; kernels of this twin "
                      "do not use it" % (name, self.source), file=sys.stderr)
        for top in self.kept:
            for node in top.walk_preorder():
                if node.kind == CursorKind.DECL_REF_EXPR and node.referenced is not None and \
                        node.referenced.get_usr() in usrs:
                    self.files.rewrite_variable_use(node, node.referenced.spelling)
                elif node.kind == CursorKind.VAR_DECL and node.storage_class.name == "EXTERN" and \
                        CursorKind.CUDASHARED_ATTR in attributes(node):
                    self.files.rewrite_extern_shared(node)
                elif node.kind == CursorKind.ASM_STMT:
                    raise TwinError("%s: %s uses inline assembly (GCN instructions), which the sim cannot run on the "
                                    "host; no twin is built for this program" % (self.files.where(node), top.spelling))
                elif node.kind == CursorKind.DECL_STMT:
                    decls = [d for d in node.get_children() if d.kind == CursorKind.VAR_DECL]
                    if decls and all(CursorKind.CUDASHARED_ATTR in attributes(d) and
                                     d.storage_class.name != "EXTERN" for d in decls):
                        self.files.rewrite_static_shared(node, decls)
        return table

    def _variable_entry(self, c, managed, metadata_vars, usrs, table):
        """Checks device variable c and adds its code-object variables to
        `table`; returns the index the accessor reads (None: not in the
        code object)."""
        where = self.files.where(c)
        words = self.files.tokens(c)
        if "extern" in words:
            raise TwinError(where + ": extern device variable " + c.spelling + " (relocatable device code) is "
                            "not supported in twins")
        if c.semantic_parent.kind not in (CursorKind.NAMESPACE, CursorKind.TRANSLATION_UNIT,
                                          CursorKind.LINKAGE_SPEC) and not is_linkage_block(c.semantic_parent):
            raise TwinError(where + ": device variable " + c.spelling + " must be at namespace scope")
        for node in c.walk_preorder():
            if node.kind == CursorKind.DECL_REF_EXPR and node.referenced is not None and \
                    node.referenced.get_usr() in usrs:
                # The loader resolves `&x` to the device copy; the twin's
                # initial bytes are copied, not relocated.
                raise TwinError("%s: the initialiser of device variable %s refers to device variable %s, which "
                                "twins cannot express" % (self.files.where(node), c.spelling, node.spelling))
        name = c.mangled_name
        if managed:
            # The code object has `name` (a pointer the runtime sets to the
            # managed allocation) and `name.managed` (the initial bytes).
            if name not in metadata_vars or name + ".managed" not in metadata_vars:
                raise TwinError(where + ": the code object lacks the variables %s and %s.managed of __managed__ "
                                "variable %s" % (name, name, c.spelling))
            table.append((name + ".managed", qualified_name(c) + "__hipr_init"))
            table.append((name, qualified_name(c) + "__hipr_mptr"))
            return len(table) - 1
        if name in metadata_vars:
            table.append((name, qualified_name(c) + "__hipr_init"))
            return len(table) - 1
        print("twin_rewrite: note: " + where + ": device variable " + c.spelling + " (" + name + ") is not "
              "in the code object; the twin keeps it in host memory", file=sys.stderr)
        return None

    # ---- Kernels --------------------------------------------------------------

    def kernel_entries(self, metadata_kernels):
        """Returns (entries [(mangled, expression)], instantiations [text],
        template kernel names) for every kernel of the code object."""
        names = [k["name"] for k in metadata_kernels]
        demangled = demangle(names)
        by_qual = {}
        for c in self.kernels.values():
            by_qual.setdefault(qualified_name(c), []).append(c)
        entries, instantiations, templated, problems = [], [], [], []
        # A second explicit instantiation would not compile: where the source
        # has its own, the descriptor's use of the function instantiates the rest.
        own = self.files.explicit_instantiations()
        for name in names:
            c = self.kernels.get(name)
            if c is not None and c.get_num_template_arguments() <= 0:
                qual = qualified_name(c)
                if len(by_qual[qual]) == 1:
                    entries.append((name, "&" + qual))
                else:  # Overloaded: pick by type.
                    sig = c.type.get_canonical().spelling.replace(ANON, "")
                    ret, _, params = sig.partition(" (")
                    entries.append((name, "static_cast<%s (*)(%s>(&%s)" % (ret, params, qual)))
                continue
            text = demangled.get(name, name)
            split = None
            for qual, template in sorted(self.templates, key=lambda t: -len(t[0])):
                split = split_template_kernel(text, qual)
                if split:
                    break
            if split is None or UNNAMEABLE.search(text):
                problems.append("%s (%s)" % (name, text))
                continue
            ret, args, params = split
            fn = "::%s<%s>" % (qual, args)
            entries.append((name, "static_cast<%s (*)(%s)>(&%s)" % (ret, params, fn)))
            templated.append(name)
            if c is None and qual.split("::")[-1] not in own:  # Not instantiated or specialised in the source.
                # Inside the template's own namespaces: an anonymous one cannot be named from outside.
                scopes = namespaces(template)
                instantiations.append("// %s\n%stemplate %s %s<%s>(%s);%s" % (
                    text, "".join("namespace %s { " % n for n in scopes), ret, qual.split("::")[-1], args, params,
                    " }" * len(scopes)))
        if problems:
            raise TwinError("the code object has kernels that " + self.source + " does not define as a __global__ "
                            "function or template the twin can name:\n  " + "\n  ".join(problems))
        return entries, instantiations, templated

    def explains(self, kernel_name, demangled):
        if kernel_name in self.kernels:
            return True
        return any(split_template_kernel(demangled, q) for q, _ in self.templates)


def descriptor(entries, variables, sha, source):
    out = ["namespace {"]
    for i, (_, expr) in enumerate(entries):
        out.append("using hipr_twin_k%d = ::hipr_twin::Kernel<(%s)>;" % (i, expr))
    if entries:
        # const, not constexpr (a function address as const void*): still
        # initialised statically, which -Werror=global-constructors checks.
        out.append("const HiprTwinKernel hipr_twin_kernels[] = {")
        for i, (name, _) in enumerate(entries):
            out.append('    {"%s", &hipr_twin_k%d::Run, reinterpret_cast<const void*>(hipr_twin_k%d::kFunction), '
                       'hipr_twin_k%d::Layout::kCount, '
                       "hipr_twin_k%d::Layout::kArgs.data()}," % (name, i, i, i, i))
        out.append("};")
    if variables:
        out.append("constexpr HiprTwinVariable hipr_twin_variables[] = {")
        for name, storage in variables:
            out.append('    {"%s", sizeof(%s), &%s},' % (name, storage, storage))
        out.append("};")
    out.append("constexpr HiprTwinModule hipr_twin_descriptor = {")
    out.append("    HIPR_TWIN_ABI_VERSION, %d, %d, 0," % (len(entries), len(variables)))
    out.append('    "%s", %s,' % (sha, json.dumps(source)))
    out.append("    %s, %s," % ("hipr_twin_kernels" if entries else "nullptr",
                                "hipr_twin_variables" if variables else "nullptr"))
    out.append("    &::hipr_twin::CurrentThreadSlot};")
    out.append("}  // namespace")
    out.append('extern "C" __attribute__((visibility("default"))) const HiprTwinModule* hipr_twin_module(void) {')
    out.append("  return &hipr_twin_descriptor;")
    out.append("}")
    return "\n".join(out) + "\n"


def choose_entry(rewriter, entries, target):
    distinct = {e["sha256"]: e for e in entries}
    if not distinct:
        raise TwinError("the binary has no %s code object" % target)
    if len(distinct) == 1:
        return next(iter(distinct.values()))
    names = [k["name"] for e in distinct.values() for k in e["code_object"]["kernels"]]
    dm = demangle(names)
    fits = [e for e in distinct.values() if e["code_object"]["kernels"] and
            all(rewriter.explains(k["name"], dm.get(k["name"], k["name"])) for k in e["code_object"]["kernels"])]
    if len(fits) != 1:
        raise TwinError("cannot tell which of the binary's %d %s code objects %s was compiled into (%d fit)"
                        % (len(distinct), target, rewriter.source, len(fits)))
    return fits[0]


def no_twin_reason(rw, entries):
    """Why `rw`'s source needs no twin, or None when it does: it defines no
    kernels and no device variables (hipcc makes no code object of such a
    translation unit: a host-only file of a several-source program)."""
    if not entries or rw.kernels or rw.templates or rw.device_vars:
        return None  # No entries: choose_entry names the missing target.
    return "it defines no kernels"


def cmd_rewrite(args):
    both, _, _ = classify_flags(args.flags)
    clang_args = ["-I" + d for d in args.include_dir] + ["-D" + d for d in args.define] + both
    inspect = json.load(open(args.inspect_json)) if args.inspect_json else run_inspect(args.inspect, args.binary,
                                                                                        args.target)
    if not inspect.get("bundles"):
        return write_no_twin(args, os.path.realpath(args.source), "%s has no device code" % args.binary)
    macros = twin_macros.device_macros(args.target, clang_args)
    rw = Rewriter(args.source, clang_args, args.target)
    rw.classify()
    all_entries = code_object_entries(inspect, args.target)
    reason = no_twin_reason(rw, all_entries)
    if reason:
        return write_no_twin(args, rw.source, reason)
    entry = choose_entry(rw, all_entries, args.target)
    co = entry["code_object"]
    rw.prune_types(demangle([k["name"] for k in co["kernels"]]).values())
    rw.resolve_declarations()
    rw.check_layout_macros(macros)
    variables = rw.rewrite_variables({v["name"] for v in co.get("variables", [])})
    entries, instantiations, templated = rw.kernel_entries(co["kernels"])
    output = os.path.abspath(args.output)
    main, headers = rw.files.render(output, output + ".headers", macros.source_block())
    lines = main.count("\n") + 3
    tail = ["", '#line %d "%s"' % (lines, output),
            "// ---- Kernel twin descriptor (twin_rewrite.py) for code object " + entry["sha256"],
            '#include "hipr_twin_prelude.h"'] + instantiations + [descriptor(entries, variables, entry["sha256"],
                                                                              rw.source)]
    if headers:
        os.makedirs(output + ".headers", exist_ok=True)
    for path, text in headers.items():
        write_if_changed(path, text)
    write_if_changed(output, main + "\n".join(tail))
    if args.manifest:
        write_if_changed(args.manifest, json.dumps({
            "sha256": entry["sha256"], "source": rw.source, "binary": args.binary,
            "kernels": [n for n, _ in entries], "template_kernels": templated,
            "variables": [n for n, _ in variables]}, indent=1) + "\n")
    if args.depfile:
        deps = " ".join(p.replace(" ", "\\ ") for p in rw.files.user_files())
        write_if_changed(args.depfile, "%s: %s\n" % (args.output.replace(" ", "\\ "), deps))


def write_no_twin(args, source, reason):
    """A source that needs no twin: a twin source and a manifest that say
    so (build then only writes the stamp), so build systems see their
    outputs."""
    write_if_changed(args.output, "// No kernel twin: %s.\n" % reason)
    if args.manifest:
        write_if_changed(args.manifest, json.dumps({
            "sha256": None, "none": reason, "source": source, "binary": args.binary}, indent=1) + "\n")
    if args.depfile:
        write_if_changed(args.depfile, "%s: %s\n" % (args.output.replace(" ", "\\ "), source.replace(" ", "\\ ")))


def write_if_changed(path, text):
    if os.path.exists(path) and open(path).read() == text:
        return
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def cmd_install(args):
    install(args.library, args.manifest, args.output_dir, args.stamp)


def install(library, manifest_path, output_dir, stamp):
    """Checks the built library (every template kernel's symbol defined)
    and copies it to output_dir/<sha256>.so; returns that path."""
    manifest = json.load(open(manifest_path))
    sha = manifest["sha256"]
    if not re.fullmatch(r"[0-9a-f]{64}", sha):
        raise TwinError("bad sha256 in " + manifest_path)
    if manifest["template_kernels"]:
        nm = subprocess.run(["llvm-nm-15", "--defined-only", library], capture_output=True, text=True)
        if nm.returncode != 0:
            raise TwinError("cannot list the symbols of %s: %s" % (library, nm.stderr.strip()))
        nm = nm.stdout
        defined = {line.split()[-1] for line in nm.splitlines() if line.strip()}
        missing = [k for k in manifest["template_kernels"] if k not in defined]
        if missing:
            raise TwinError(library + ": template kernels whose instantiation has another name in the twin "
                            "(the host and device mangling differ): " + ", ".join(missing))
    os.makedirs(output_dir, exist_ok=True)
    target = os.path.join(output_dir, sha + ".so")
    tmp = target + ".tmp.%d" % os.getpid()
    shutil.copyfile(library, tmp)
    os.chmod(tmp, 0o755)
    os.replace(tmp, target)  # A loaded older copy keeps its inode.
    write_if_changed(stamp, "hipr-twin 1\nsha256 %s\nlibrary %s\nsource %s\nbinary %s\n"
                     % (sha, target, manifest["source"], manifest["binary"]))
    return target


def twin_compile_command(twin_dir, twin_source, library, source_dir, flags):
    """The host compile of a twin source. -fno-math-errno as the device
    compile (the twin source checks __NO_MATH_ERRNO__); -std=c++17 as
    hipr_hipcc_binary() (__cplusplus), unless the program's flags say
    otherwise (they come after)."""
    return ["clang++-15", "-x", "c++", "-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden",
            "-fno-exceptions", "-fno-math-errno", "-Werror=global-constructors",
            "-I" + os.path.join(twin_dir, "include"), "-I" + twin_dir, "-iquote", source_dir] + list(flags) + \
        [twin_source, "-o", library, "-Wl,-z,defs", "-lm"]


def cmd_build(args):
    """Compiles a twin source and installs the library (or, for a source
    that needs no twin, says so and writes the stamp)."""
    manifest = json.load(open(args.manifest))
    if manifest.get("sha256") is None:
        print("hipr-twin: no twin for %s: %s" % (manifest["source"], manifest["none"]))
        os.makedirs(os.path.dirname(os.path.abspath(args.stamp)), exist_ok=True)
        write_if_changed(args.stamp, "hipr-twin 1\nnone %s\nsource %s\nbinary %s\n"
                         % (manifest["none"], manifest["source"], manifest["binary"]))
        return
    both, _, _ = classify_flags(args.flags)
    twin_dir = args.twin_dir or os.path.dirname(os.path.realpath(__file__))
    source_dir = os.path.dirname(manifest["source"])
    cc = subprocess.run(twin_compile_command(twin_dir, args.twin_source, args.library, source_dir, both))
    if cc.returncode != 0:
        raise TwinError("the twin of %s does not compile (clang++-15's errors above point at the program's own "
                        "lines)" % manifest["source"])
    install(args.library, args.manifest, args.output_dir, args.stamp)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("rewrite")
    r.add_argument("--source", required=True)
    r.add_argument("--binary", required=True, help="the program or library hipcc built from the source")
    r.add_argument("--inspect", default="hipr-inspect", help="the hipr-inspect executable")
    r.add_argument("--inspect-json", help="use this hipr-inspect --json output instead of running it")
    r.add_argument("--output", required=True)
    r.add_argument("--target", default="gfx90a",
                   help="the device the twin stands for (a target ID, as --offload-arch takes): it picks the code "
                        "object and gives the parse and the twin the device compile's macros")
    r.add_argument("--manifest")
    r.add_argument("--depfile")
    r.add_argument("-I", dest="include_dir", action="append", default=[])
    r.add_argument("-D", dest="define", action="append", default=[])
    r.add_argument("flags", nargs="*", help="after --: the program's compile flags (classify_flags)")
    b = sub.add_parser("build")
    b.add_argument("--twin-source", required=True, help="what rewrite wrote")
    b.add_argument("--manifest", required=True)
    b.add_argument("--library", required=True, help="where to build the twin library")
    b.add_argument("--output-dir", required=True)
    b.add_argument("--stamp", required=True)
    b.add_argument("--twin-dir", help="the prelude's directory (default: this script's)")
    b.add_argument("flags", nargs="*", help="after --: the program's compile flags, as given to rewrite")
    i = sub.add_parser("install")
    i.add_argument("--library", required=True)
    i.add_argument("--manifest", required=True)
    i.add_argument("--output-dir", required=True)
    i.add_argument("--stamp", required=True)
    args = p.parse_args()
    try:
        {"rewrite": cmd_rewrite, "build": cmd_build, "install": cmd_install}[args.command](args)
    except TwinError as e:
        print("twin_rewrite: error: " + str(e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
