#!/usr/bin/python3
"""clang's thread-safety analysis over the worker's, the client stub's and the rdma transport's sources (-Wthread-safety -Werror).

    /usr/bin/python3 thread_safety_check.py BUILD_DIR SOURCE_ROOT [CLANG]

Reads BUILD_DIR/compile_commands.json and compiles, with clang++-15 and -fsyntax-only, every
translation unit of worker_service/ (the sim, the hip device, the session and the acceptor) and
client_stub/ and protocol/rdma/ (not the tests, not generated code, not the twins' sources) with the same flags plus
-Wthread-safety -Werror=thread-safety. The lock rules those files state with
protocol/thread_annotations.h are then checked by the compiler: an access to HIPR_GUARDED_BY state
without its lock fails here. Exit 0 when every file passes; 1, with clang's messages, otherwise.
Stdlib only.
"""
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys

CHECKED_DIRS = ("worker_service/", "client_stub/", "protocol/rdma/")
SKIPPED = ("_test.cc", "/gen/")


def clang_args(entry, clang):
    args = entry.get("arguments") or shlex.split(entry["command"])
    out = [clang]
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD"):
            continue
        out.append(a)
    return out + ["-fsyntax-only", "-Wthread-safety", "-Werror=thread-safety", "-Wno-unused-command-line-argument"]


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    build, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    clang = sys.argv[3] if len(sys.argv) > 3 else "clang++-15"
    if shutil.which(clang) is None:
        print("thread_safety_check: %s is not installed (Debian package clang-15)" % clang)
        return 1
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    chosen = {}
    for e in entries:
        path = os.path.abspath(os.path.join(e["directory"], e["file"]))
        rel = os.path.relpath(path, root)
        if rel.startswith("..") or not rel.startswith(CHECKED_DIRS) or any(s in rel for s in SKIPPED):
            continue
        chosen.setdefault(rel, e)  # A file built into two targets is checked once.
    if not chosen:
        print("thread_safety_check: no worker_service sources in %s/compile_commands.json" % build)
        return 1

    def check(item):
        rel, e = item
        r = subprocess.run(clang_args(e, clang), cwd=e["directory"], capture_output=True, text=True)
        return rel, r.returncode, r.stderr

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for rel, rc, err in pool.map(check, sorted(chosen.items())):
            if rc != 0:
                failed += 1
                print("FAIL %s\n%s" % (rel, err))
    print("thread_safety_check: %d of %d translation units pass -Wthread-safety -Werror" %
          (len(chosen) - failed, len(chosen)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
