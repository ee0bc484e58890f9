#!/usr/bin/python3
"""Layering of hipr's source tree, checked from its #include lines.

    layering_check.py SOURCE_DIR

Rules (STYLE.md, "Layers you can see from the folder tree"):
  * protocol/ (frames, codecs, code objects, transports) includes nothing of
    client_stub/, worker_service/, shim_gen/ or tests/, and no HIP header: it
    knows nothing of HIP entry points or sessions;
  * client_stub/ and worker_service/ never include each other;
  * nothing in the product (protocol/, client_stub/, worker_service/)
    includes tests/; unit tests beside the code (*_test.cc) may.
Exits 1 listing every include that breaks a rule (file:line: include).
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
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


def main():
    top = os.path.abspath(sys.argv[1])
    broken = []
    checked = 0
    for folder, rule in RULES.items():
        for root, _, files in os.walk(os.path.join(top, folder)):
            for name in sorted(files):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(root, name)
                is_test = name.endswith(("_test.cc", "_test_util.h"))
                checked += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        why = rule(m.group(1), m.group(2))
                        if why and is_test and m.group(2).startswith("tests/"):
                            why = None
                        if why:
                            broken.append("%s:%d: %s (%s)" % (os.path.relpath(path, top), number, line.strip(), why))
    if checked < 50:
        print("layering_check: only %d files found under %s: wrong source directory?" % (checked, top))
        return 1
    for b in broken:
        print(b)
    if broken:
        print("layering_check: %d include(s) break the layering (STYLE.md)" % len(broken))
        return 1
    print("layering_check: %d files, layering holds" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
