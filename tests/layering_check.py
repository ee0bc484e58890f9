#!/usr/bin/python3
"""Layering of hipr's source tree, checked from its #include lines.

    layering_check.py SOURCE_DIR

Rules (STYLE.md, "Layers you can see from the folder tree"):
  * protocol/ (frames, codecs, code objects, transports) includes nothing of
    client_stub/, worker_service/, shim_gen/ or tests/, and no HIP header: it
    knows nothing of HIP entry points or sessions;
  * client_stub/ and worker_service/ never include each other;
  * nothing in the product (protocol/, client_stub/, worker_service/)
    includes tests/; unit tests beside the code (*_test.cc) may;
  * inside client_stub/, the engines (every folder but api/, and client.h
    at the root) never include api/, the exported HIP entry points: state
    is passed down from the API edge;
  * no engine calls Client::Get(): only api/ (and client.cc, which defines
    it) reach the process-wide client; the process-wide registries are
    owned in api/process_state.h, which no engine may include;
  * inside api/, the entry-point files (api_*.cc but api_common.cc and
    api_result.cc) are leaves: they define the exported functions and
    file-local helpers only, never a hipr::client function that another
    file calls. What several of them share lives in a component of its
    own (copy_paths, module_symbols, texture_objects, api_common) or an
    engine;
  * no include cycle between client_stub/'s components (a component: one
    .h and its .cc, unit tests aside), nor between its folders (each file
    at client_stub/'s root is a folder of its own): the folders form a DAG.
Exits 1 listing every include or call that breaks a rule.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
CLIENT_GET = re.compile(r'\bClient::Get\s*\(')
# A definition of a hipr::client function outside its namespace
# (`hipError_t hipr::client::Name(...)`), or the opening of the namespace
# itself (not an anonymous one inside it).
QUALIFIED_DEFINITION = re.compile(r'^[A-Za-z_].*\bhipr::client::\w+\s*\(')
NAMED_NAMESPACE = re.compile(r'^\s*namespace\s+hipr::client\s*\{')
SOURCE_SUFFIXES = (".h", ".hpp", ".cc", ".cpp", ".c", ".hip", ".S")

# (folder whose files are checked, predicate on (quote, path) -> reason or None)
RULES = {
    "protocol": lambda q, p: (
        "protocol/ may not include %s" % p.split("/")[0] + "/"
        if q == '"' and p.split("/")[0] in ("client_stub", "worker_service", "shim_gen", "tests")
        else "protocol/ may not include HIP headers" if q == "<" and p.startswith("hip/") else None),
    "client_stub": lambda q, p: (
        "client_stub/ may not include worker_service/" if q == '"' and p.startswith("worker_service/")
        else "the product may not include tests/" if q == '"' and p.startswith("tests/") else None),
    "worker_service": lambda q, p: (
        "worker_service/ may not include client_stub/" if q == '"' and p.startswith("client_stub/")
        else "the product may not include tests/" if q == '"' and p.startswith("tests/") else None),
}


def is_engine(rel):
    """client_stub/ files outside api/: the engines and the root."""
    return rel.startswith("client_stub/") and not rel.startswith("client_stub/api/")


def is_entry_point_file(rel):
    """client_stub/api/api_copy.cc and the like: exported entry points only."""
    name = rel.rsplit("/", 1)[-1]
    return (rel.startswith("client_stub/api/api_") and name.endswith(".cc")
            and name not in ("api_common.cc", "api_result.cc"))


def named_namespace_functions(lines):
    """Line numbers of functions defined directly in `namespace hipr::client {`
    (anonymous namespaces inside it excepted)."""
    out = []
    stack = []  # "named", "anon" or "other" per open namespace
    for number, line in enumerate(lines, 1):
        code = line.split("//")[0]
        if NAMED_NAMESPACE.match(code):
            stack.append("named")
            continue
        if re.match(r'^\s*namespace\s*\{', code):
            stack.append("anon")
            continue
        if re.match(r'^\s*namespace\s+\w[\w:]*\s*\{', code):
            stack.append("other")
            continue
        if re.match(r'^\}\s*(//\s*namespace.*)?$', line.strip()) and "namespace" in line and stack:
            stack.pop()
            continue
        if stack and stack[-1] == "named" and re.match(r'^[A-Za-z_][\w:<>,\*& ]*\b\w+\s*\([^;]*(\{|,)?\s*$', code) \
                and not code.rstrip().endswith(";") \
                and not code.startswith(("struct", "class", "using", "enum", "template", "constexpr", "static_assert")):
            out.append((number, line.strip()))
    return out


def component(rel):
    """client_stub/kernels/code_module.cc -> client_stub/kernels/code_module."""
    return re.sub(r"(_test)?\.(h|hpp|cc|cpp|c|S)$", "", rel)


def folder_of(comp):
    """client_stub/kernels/code_module -> client_stub/kernels/; client_stub/client -> client_stub/client."""
    parts = comp.split("/")
    return "/".join(parts[:2]) + "/" if len(parts) > 2 else comp


def find_cycles(edges):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                out.append(sorted(scc))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    top = os.path.abspath(sys.argv[1])
    broken = []
    checked = 0
    edges = {}  # client_stub/ component -> components it includes.
    for folder, rule in RULES.items():
        for root, _, files in os.walk(os.path.join(top, folder)):
            for name in sorted(files):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(root, name)
                is_test = name.endswith(("_test.cc", "_test_util.h"))
                rel = os.path.relpath(path, top).replace(os.sep, "/")
                checked += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.read().split("\n")
                if not is_test and is_entry_point_file(rel):
                    for number, line in enumerate(lines, 1):
                        if QUALIFIED_DEFINITION.match(line.split("//")[0]):
                            broken.append("%s:%d: %s (an entry-point file may not define a function other files "
                                          "call: give it a component of its own)" % (rel, number, line.strip()))
                    for number, line in named_namespace_functions(lines):
                        broken.append("%s:%d: %s (an entry-point file may define functions in hipr::client only "
                                      "inside an anonymous namespace)" % (rel, number, line))
                for number, line in enumerate(lines, 1):
                    if (not is_test and is_engine(rel) and rel != "client_stub/client.cc"
                            and CLIENT_GET.search(line.split("//")[0])):
                        broken.append("%s:%d: %s (an engine may not call Client::Get(): "
                                      "take the client from the API edge)" % (rel, number, line.strip()))
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    why = rule(m.group(1), m.group(2))
                    if why and is_test and m.group(2).startswith("tests/"):
                        why = None
                    if (not why and not is_test and is_engine(rel) and m.group(1) == '"'
                            and m.group(2).startswith("client_stub/api/")):
                        why = "an engine may not include client_stub/api/, the exported entry points"
                    if (not is_test and folder == "client_stub" and m.group(1) == '"'
                            and m.group(2).startswith("client_stub/")):
                        src, dst = component(rel), component(m.group(2))
                        if src != dst:
                            edges.setdefault(src, set()).add(dst)
                    if why:
                        broken.append("%s:%d: %s (%s)" % (os.path.relpath(path, top), number, line.strip(), why))
    if checked < 50:
        print("layering_check: only %d files found under %s: wrong source directory?" % (checked, top))
        return 1
    for cycle in find_cycles(edges):
        broken.append("include cycle between client_stub/ components: %s" % " <-> ".join(cycle))
    folders = {}
    for src, dsts in edges.items():
        for dst in dsts:
            if folder_of(src) != folder_of(dst):
                folders.setdefault(folder_of(src), set()).add(folder_of(dst))
    for cycle in find_cycles(folders):
        via = ["%s -> %s" % (s, d) for s in sorted(edges) for d in sorted(edges[s])
               if folder_of(s) in cycle and folder_of(d) in cycle and folder_of(s) != folder_of(d)]
        broken.append("include cycle between client_stub/ folders: %s (through %s)" % (" <-> ".join(cycle), "; ".join(via)))
    for b in broken:
        print(b)
    if broken:
        print("layering_check: %d line(s) break the layering (STYLE.md)" % len(broken))
        return 1
    print("layering_check: %d files, layering holds" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
