"""Source-level helpers for twin_rewrite.py: parsing a .hip file with
libclang-15 as HIP (device side), walking its declarations, and editing the
program's own files (the main file and every non-system header it includes)
by byte ranges, keeping line numbers so that compiler messages about a twin
point at the original lines (#line)."""

import ctypes
import os
import re
import subprocess

import clang.cindex as ci
from clang.cindex import CursorKind  # noqa: F401  (re-exported)

LIBCLANG = ["/usr/lib/llvm-15/lib/libclang-15.so.1", "/usr/lib/llvm-15/lib/libclang.so.1", "libclang-15.so.1"]


class TwinError(Exception):
    pass


def _load_libclang():
    if ci.Config.loaded:
        return
    for path in LIBCLANG:
        if os.path.exists(path) or "/" not in path:
            ci.Config.set_library_file(path)
            return


def _resource_dir():
    return subprocess.run(["clang++-15", "-print-resource-dir"], check=True, capture_output=True,
                          text=True).stdout.strip()


def parse_hip(source, extra_args, target="gfx90a"):
    """Parses `source` as hipcc does for `target`, device side only."""
    _load_libclang()
    res = _resource_dir()
    args = ["-x", "hip", "--cuda-device-only", "--rocm-path=/usr", "-nogpulib", "--offload-arch=" + target,
            "-std=c++17", "-resource-dir", res, "-isystem", os.path.join(res, ".."),
            # hipcc gets __managed__ from clang's HIP wrapper header, which this
            # parse (no HIP installation detected) does not include.
            "-D__managed__=__attribute__((managed))"] + list(extra_args)
    tu = ci.Index.create().parse(source, args=args, options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        raise TwinError("libclang cannot parse %s as HIP:\n  %s" % (source, "\n  ".join(str(d) for d in errors)))
    return tu


class _SourceRangeList(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint), ("ranges", ctypes.POINTER(ci.SourceRange))]


def skipped_ranges(tu):
    """{real path: [(start, end)]}: the text the parse's preprocessor
    skipped (#if branches not taken), from the detailed processing record."""
    lib = ci.conf.lib
    lib.clang_getAllSkippedRanges.argtypes = [ctypes.c_void_p]
    lib.clang_getAllSkippedRanges.restype = ctypes.POINTER(_SourceRangeList)
    lib.clang_disposeSourceRangeList.argtypes = [ctypes.POINTER(_SourceRangeList)]
    ranges = lib.clang_getAllSkippedRanges(tu._as_parameter_)
    out = {}
    try:
        for i in range(ranges.contents.count):
            r = ranges.contents.ranges[i]
            if r.start.file is not None:
                out.setdefault(os.path.realpath(r.start.file.name), []).append((r.start.offset, r.end.offset))
    finally:
        lib.clang_disposeSourceRangeList(ranges)
    return out


_in_system_header = None


def in_system_header(location):
    global _in_system_header
    if _in_system_header is None:
        f = ci.conf.lib.clang_Location_isInSystemHeader
        f.argtypes = [ci.SourceLocation]
        f.restype = ctypes.c_int
        _in_system_header = f
    return bool(_in_system_header(location))


def attributes(c):
    return {ch.kind for ch in c.get_children() if ch.kind.is_attribute()}


def _head(c):
    """Spellings of c's tokens up to its body."""
    words = []
    for t in c.get_tokens():
        if t.spelling == "{":
            break
        words.append(t.spelling)
    return words


def is_constexpr(c):
    return "constexpr" in _head(c)


def qualified_name(c):
    """'::ns::name', leaving out anonymous namespaces (their names are
    reachable from the enclosing one)."""
    parts = [c.spelling]
    p = c.semantic_parent
    while p is not None and p.kind != CursorKind.TRANSLATION_UNIT:
        if p.kind in (CursorKind.NAMESPACE, CursorKind.STRUCT_DECL, CursorKind.CLASS_DECL):
            if p.spelling:
                parts.append(p.spelling)
        elif p.kind != CursorKind.LINKAGE_SPEC and not is_linkage_block(p):
            raise TwinError("cannot name %s inside a %s" % (c.spelling, p.kind.name))
        p = p.semantic_parent
    return "::" + "::".join(reversed(parts))


def is_linkage_block(c):
    """extern "C" ... (libclang-15 exposes it as UNEXPOSED_DECL)."""
    if c.kind != CursorKind.UNEXPOSED_DECL:
        return False
    head = [t.spelling for _, t in zip(range(2), c.get_tokens())]
    return len(head) == 2 and head[0] == "extern" and head[1].startswith('"')


def namespaces(c):
    """Names of the namespaces around c, outermost first ('' when anonymous)."""
    out = []
    p = c.semantic_parent
    while p is not None and p.kind != CursorKind.TRANSLATION_UNIT:
        if p.kind == CursorKind.NAMESPACE:
            out.append(p.spelling)
        p = p.semantic_parent
    return list(reversed(out))


def walk_scope(cursor, files, visit):
    """Calls visit(c) for each namespace-scope declaration in the program's
    own files, entering namespaces and extern "C" blocks."""
    for c in cursor.get_children():
        if c.location.file is None or not files.is_user(c):
            continue
        if c.kind in (CursorKind.NAMESPACE, CursorKind.LINKAGE_SPEC) or is_linkage_block(c):
            head = [t.spelling for _, t in zip(range(3), c.get_tokens())]
            if is_linkage_block(c) and (len(head) < 3 or head[2] != "{"):
                for child in c.get_children():  # extern "C" T f(...): one declaration.
                    files.widen(child, c)
            walk_scope(c, files, visit)
        else:
            visit(c)


class SourceFiles:
    """The program's own files in a translation unit and the edits to them."""

    def __init__(self, tu, main):
        self.tu = tu
        self.main = main
        self.data = {}      # path -> bytes
        self.edits = {}     # path -> {start: (end, replacement bytes)}
        self.blanks = {}    # path -> {key of a dropped cursor: [(start, end) to blank]}
        self.wider = {}     # (path, start) -> (start, end) to blank instead
        self.includes = []  # (includer, offset of the file name, included path or None, system name)
        self._system = {}
        for inc in tu.get_includes():
            src = os.path.realpath(inc.source.name)
            if not self._is_user_path(src):
                continue
            dst = os.path.realpath(inc.include.name)
            user = self._is_user_path(dst)
            self.includes.append((src, inc.location.offset, dst if user else None,
                                  inc.include.name if not user else None))

    def _is_user_path(self, path):
        path = os.path.realpath(path)
        if path == self.main:
            return True
        if path not in self._system:
            loc = self.tu.get_location(path, 0)
            self._system[path] = in_system_header(loc)
        return not self._system[path]

    def is_user(self, c):
        return c.location.file is not None and self._is_user_path(c.location.file.name)

    def user_files(self):
        files = [self.main]
        for _, _, dst, _ in self.includes:
            if dst and dst not in files:
                files.append(dst)
        return files

    def _bytes(self, path):
        path = os.path.realpath(path)
        if path not in self.data:
            with open(path, "rb") as f:
                self.data[path] = f.read()
        return self.data[path]

    @staticmethod
    def _path(c):
        return os.path.realpath(c.location.file.name)

    def path_of(self, c):
        return self._path(c) if c.location.file is not None else None

    def same_file(self, a, b):
        return self._path(a) == self._path(b)

    def where(self, c):
        return "%s:%d:%d" % (c.location.file.name, c.location.line, c.location.column)

    def tokens(self, c):
        return [t.spelling for t in c.get_tokens()]

    def head_tokens(self, c):
        return _head(c)

    def text(self, c):
        return self._bytes(self._path(c))[c.extent.start.offset:c.extent.end.offset].decode()

    def widen(self, c, outer):
        """Dropping c drops `outer` (an unbraced extern "C" around it) too."""
        self.wider[(self._path(c), c.extent.start.offset)] = (outer.extent.start.offset, outer.extent.end.offset)

    @staticmethod
    def _key(c):
        return (c.extent.start.offset, c.extent.end.offset, c.kind.name, c.spelling)

    def blank(self, c, parts=None):
        """Drops c; with parts [(start, end)], only those ranges of its
        declaration (one declarator of several, or all but a type the
        declaration defines)."""
        path = self._path(c)
        if parts is None:
            start, end = self.wider.get((path, c.extent.start.offset), (c.extent.start.offset, c.extent.end.offset))
            parts = [(self._attributes_before(path, start), end)]
        self.blanks.setdefault(path, {})[self._key(c)] = parts

    def blank_start(self, c):
        """Where blanking c starts: before the attributes written ahead of it."""
        return self._attributes_before(self._path(c), c.extent.start.offset)

    def unblank(self, c):
        self.blanks.get(self._path(c), {}).pop(self._key(c), None)

    def is_blanked(self, c):
        return self._key(c) in self.blanks.get(self._path(c), {})

    def dropped(self, path, offset):
        """Whether the byte at `offset` of `path` (a real path) is dropped."""
        return any(s <= offset < e for parts in self.blanks.get(path, {}).values() for s, e in parts)

    def _attributes_before(self, path, start):
        """Moves `start` back over [[...]] and __attribute__((...)) written
        before a declaration, which libclang leaves out of its extent."""
        src = self._bytes(path)
        while True:
            i = start
            while i > 0 and src[i - 1:i].isspace():
                i -= 1
            if src[i - 2:i] == b"]]":
                j = src.rfind(b"[[", 0, i - 2)
                if j < 0:
                    return start
                start = j
            elif src[i - 1:i] == b")" and src[i - 2:i] == b"))":
                depth, j = 0, i
                while j > 0:
                    j -= 1
                    depth += {b")": 1, b"(": -1}.get(src[j:j + 1], 0)
                    if depth == 0:
                        break
                k = j
                while k > 0 and src[k - 1:k].isspace():
                    k -= 1
                if src[k - len(b"__attribute__"):k] != b"__attribute__":
                    return start
                start = k - len(b"__attribute__")
            else:
                return start

    def explicit_instantiations(self):
        """Names of templates the program's files instantiate explicitly
        (`template [extern] ... name<...>(...);`, which libclang-15 does not
        expose as cursors)."""
        names = set()
        for path in self.user_files():
            words = [t.spelling for t in self.file_tokens(path)]
            for i, w in enumerate(words):
                if w != "template" or i + 1 >= len(words) or words[i + 1] == "<":
                    continue
                for j in range(i + 1, min(len(words), i + 200)):
                    if words[j] in (";", "{"):
                        break
                    if words[j] == "<" and j > i + 1:
                        names.add(words[j - 1])
                        break
        return names

    def file_tokens(self, path):
        """All tokens of one of the program's files, as lexed (directives
        and skipped #if branches included)."""
        extent = self.tu.get_extent(path, (0, len(self._bytes(path))))
        return self.tu.get_tokens(extent=extent)

    def _edit(self, path, start, end, text):
        self.edits.setdefault(path, {})[start] = (end, text.encode())

    def rewrite_device_variables(self, decls, managed=False):
        """One declaration of device variables, decls [(cursor, index)] in
        declarator order: `__device__ T a = init, *b;` -> `static T
        a__hipr_init = init, *b__hipr_init;` (the storage for the initial
        bytes) plus, for each declarator, an accessor returning the module's
        device copy (or, with index None, the storage itself).

        `__managed__ T name = init;` (managed=True; index is that of the
        code object's pointer variable `name`) -> the storage (the code
        object's `name.managed`), a pointer variable `name__hipr_mptr` (the
        code object's `name`, which the runtime points at the managed
        allocation) and an accessor dereferencing the module's copy of that
        pointer, as the device code clang emits does."""
        first = decls[0][0]
        path = self._path(first)
        src = self._bytes(path)
        start, end = first.extent.start.offset, decls[-1][0].extent.end.offset
        qualifiers = (b"__device__", b"__constant__", b"__managed__") if managed else (b"__device__", b"__constant__")
        cut = {}
        for c, _ in decls:
            name = c.spelling
            at = c.location.offset
            if src[at:at + len(name)] != name.encode():
                raise TwinError(self.where(c) + ": device variable %s is declared through a macro; twins cannot "
                                "rewrite it" % name)
            cut[(at, at + len(name))] = name + "__hipr_init"
            for a in c.get_children():
                if a.kind in (CursorKind.CUDADEVICE_ATTR, CursorKind.CUDACONSTANT_ATTR) or \
                        (managed and a.kind == CursorKind.UNEXPOSED_ATTR):
                    a0, a1 = a.extent.start.offset, a.extent.end.offset
                    if a0 == a1 and a.kind != CursorKind.UNEXPOSED_ATTR:
                        continue  # Implicit (a managed variable is also __device__).
                    if src[a0:a1] not in qualifiers:
                        raise TwinError(self.where(c) + ": cannot rewrite the qualifiers of device variable " + name)
                    cut[(a0, a1)] = ""  # Each declarator lists the declaration's qualifiers again.
        pieces, pos = [], start
        for (a0, a1), repl in sorted(cut.items()):
            pieces.append(src[pos:a0].decode())
            pieces.append(repl)
            pos = a1
        pieces.append(src[pos:end].decode())
        decl = "".join(pieces).strip()
        if "static" not in self.tokens(first):
            decl = "static " + decl
        semi = end
        while semi < len(src) and src[semi:semi + 1].isspace():
            semi += 1
        if src[semi:semi + 1] != b";":
            raise TwinError(self.where(first) + ": cannot find the end of the declaration of device variable " +
                            first.spelling)
        accessors = []
        for c, index in decls:
            init = c.spelling + "__hipr_init"
            if managed:
                decl += "; static decltype(%s)* %s__hipr_mptr = nullptr" % (init, c.spelling)
                body = "return **static_cast<decltype(%s)**>(::hipr_twin::VariableAddress(%d));" % (init, index)
            elif index is not None:
                body = "return *static_cast<decltype(%s)*>(::hipr_twin::VariableAddress(%d));" % (init, index)
            else:
                body = "return %s;" % init
            accessors.append(" static inline decltype(%s)& %s__hipr() { %s }" % (init, c.spelling, body))
        newlines = src[start:semi].count(b"\n")
        self._edit(path, start, semi + 1, decl + ";" + "".join(accessors) + "\n" * newlines)

    def rewrite_variable_use(self, ref, name):
        path = self._path(ref)
        src = self._bytes(path)
        at = ref.location.offset
        after = src[at + len(name):at + len(name) + 1]
        if src[at:at + len(name)] != name.encode() or (after and (after.isalnum() or after == b"_")):
            raise TwinError(self.where(ref) + ": device variable %s is used through a macro; twins cannot rewrite "
                            "that use" % name)
        self._edit(path, at, at + len(name), name + "__hipr()")

    def rewrite_extern_shared(self, c):
        """`extern __shared__ T name[];` -> a pointer to the block's dynamic
        shared memory. HIP_DYNAMIC_SHARED() is left to the prelude's macro."""
        path = self._path(c)
        src = self._bytes(path)
        attr = [a for a in c.get_children() if a.kind == CursorKind.CUDASHARED_ATTR]
        if not attr or src[attr[0].extent.start.offset:attr[0].extent.end.offset] != b"__shared__":
            return
        if c.type.kind.name not in ("INCOMPLETEARRAY", "CONSTANTARRAY", "DEPENDENTSIZEDARRAY"):
            raise TwinError(self.where(c) + ": extern __shared__ %s must be an array" % c.spelling)
        elem = c.type.get_array_element_type().spelling
        start, end = c.extent.start.offset, c.extent.end.offset
        text = "%s* const %s = reinterpret_cast<%s*>(::hipr_twin::DynamicShared())" % (elem, c.spelling, elem)
        self._edit(path, start, end, text + "\n" * src[start:end].count(b"\n"))

    def rewrite_static_shared(self, stmt, decls):
        """`__shared__ T a[N], b;` in a function -> the same declarators as
        members of a local struct, one instance of it per OS thread placed
        before an inaccessible page (hipr_twin_shared.h), and a reference
        per variable: `struct hipr_shared_7 { T a[N], b; }; auto&
        hipr_shared_7_v = ::hipr_twin::StaticShared<hipr_shared_7>(); auto& a
        = hipr_shared_7_v.a; auto& b = hipr_shared_7_v.b;`. A declaration whose
        __shared__ comes from a macro is left to the prelude's thread_local."""
        path = self._path(stmt)
        src = self._bytes(path)
        attr = [a for a in decls[0].get_children() if a.kind == CursorKind.CUDASHARED_ATTR]
        start, end = stmt.extent.start.offset, stmt.extent.end.offset
        if not attr or src[attr[0].extent.start.offset:attr[0].extent.end.offset] != b"__shared__" or \
                not (start <= attr[0].extent.start.offset < end) or not src[start:end].rstrip().endswith(b";"):
            return
        a0, a1 = attr[0].extent.start.offset, attr[0].extent.end.offset
        body = (src[start:a0] + src[a1:end]).decode()
        # A member cannot be static (a static local __shared__ is the same
        # per-block storage).
        body = re.sub(r"^(\s*(?:\w+\s+)*?)static\b", r"\1", body, count=1)
        self.shared_count = getattr(self, "shared_count", 0) + 1
        name = "hipr_shared_%d" % self.shared_count
        # The declaration keeps its lines (and comments), so that messages
        # still point at the original source.
        text = "struct %s { %s }; auto& %s_v = ::hipr_twin::StaticShared<%s>();" % (name, body, name, name)
        text += "".join(" auto& %s = %s_v.%s;" % (d.spelling, name, d.spelling) for d in decls)
        self._edit(path, start, end, text)

    def render(self, main_dest, header_dir, prologue=""):
        """Returns (main text, {copy path: text}) with every user include
        pointing at the rewritten copy and <hip/hip_runtime.h> at the
        prelude. `prologue` goes between the prelude and the program."""
        dests = {self.main: main_dest}
        for i, f in enumerate(self.user_files()[1:]):
            dests[f] = os.path.join(header_dir, "%d_%s" % (i, os.path.basename(f)))
        for src, offset, dst, system_name in self.includes:
            data = self._bytes(src)
            close = {b"\"": b"\"", b"<": b">"}.get(data[offset:offset + 1])
            if close is None:
                continue  # #include MACRO
            end = data.index(close, offset + 1) + 1
            if dst is not None:
                self._edit(src, offset, end, '"%s"' % dests[dst])
            elif system_name and system_name.endswith("hip/hip_runtime.h"):
                self._edit(src, offset, end, '"hipr_twin_prelude.h"')
        out = {}
        for f in self.user_files():
            out[dests[f]] = self._apply(f)
        main = out.pop(main_dest)
        return '#include "hipr_twin_prelude.h"\n' + prologue + main, out

    def _apply(self, path):
        src = self._bytes(path)
        blanks = []  # Disjoint: the declarators of one declaration overlap.
        for s, e in sorted(r for parts in self.blanks.get(path, {}).values() for r in parts):
            if blanks and s <= blanks[-1][1]:
                blanks[-1] = (blanks[-1][0], max(blanks[-1][1], e))
            else:
                blanks.append((s, e))
        edits = [(s, e, t) for s, (e, t) in self.edits.get(path, {}).items()
                 if not any(b0 <= s and e <= b1 for b0, b1 in blanks)]
        for s, e in blanks:
            edits.append((s, e, b"\n" * src[s:e].count(b"\n")))
        edits.sort()
        out, pos = [('#line 1 "%s"\n' % path).encode()], 0
        for s, e, t in edits:
            if s < pos:
                continue  # Inside a larger blank (nested declarations).
            out.append(src[pos:s])
            out.append(t)
            pos = e
        out.append(src[pos:])
        return b"".join(out).decode()
