#!/usr/bin/python3
"""Agreement test: hipr-inspect --json against the ROCm/LLVM tools.

Run with Debian's /usr/bin/python3 (needs python3-yaml):
  inspect_agreement_test.py --inspect BIN/hipr-inspect \
      [--rocrand PATH] [--rocsparse PATH] HIPCC_BUILT_FILE...

What it covers:
  * Bundle tables, for every file: each bundle's entries (id, absolute file
    offset = bundle file_offset + entry offset, size), in order, against
    `roc-obj-ls -v FILE` (Debian's hipcc package). A host binary without a
    .hip_fatbin section (roc-obj-ls: "No kernel section found") must give
    "bundles": [].
  * Code-object metadata against `llvm-readelf-15 --notes` on the entry bytes
    cut from the file at that offset/size: amdhsa.version, amdhsa.target, the
    kernel names in order, each .kernarg_segment_size, and every arg's
    .offset/.size/.value_kind in order; plus the entry's sha256 and
    elf_size == entry size. Done for every amdgcn entry of the hipcc-built
    files and of librocrand.so.1, and for every 10th gfx90a entry (both xnack
    variants) of librocsparse.so.0, which hipr-inspect runs with
    --target gfx90a (so the other entries must have "code_object": null).
  * Bare code objects v5 (--code-object, made by clang-15) and v6
    (--code-object-v6, made by sid's clang 21 for generic processors and
    their members: testdata/make_v6_objects.sh): the same metadata
    comparison on the whole file, every hidden argument of the v5 block
    included, and the code object version against the ELF header's ABI
    version as `llvm-readelf-15 -h` reads it (v5 and v6 share metadata
    [1, 2]). A generic object must be described for --target of each member
    of its family and for no other processor.
  * librocsparse.so.0 (111 bundles, ~1.3 GB) and librocrand.so.1 are Debian
    packages: if absent the test FAILS, saying which package to install.

Budget: about 30 s on 2 cores (llvm-readelf runs in 2 processes); with
--sample-every 1 (all 222 gfx90a code objects of librocsparse) a few minutes.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

try:
    import yaml
except ImportError:
    yaml = None

READELF = "llvm-readelf-15"
ROC_OBJ_LS = "roc-obj-ls"
ROC_LINE = re.compile(r"^(\d+)\s+(\S+)\s+file://(.*)#offset=(\d+)&size=(\d+)\s*$")


class Failure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


def run_inspect(inspect, path, extra=()):
    proc = subprocess.run([inspect, "--json", *extra, path], capture_output=True, text=True)
    check(proc.returncode == 0, f"hipr-inspect {path} failed ({proc.returncode}): {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def roc_obj_ls(path):
    """[(bundle_number, id, absolute_offset, size)], or [] with no kernel section."""
    proc = subprocess.run([ROC_OBJ_LS, "-v", path], capture_output=True, text=True)
    if proc.returncode != 0:
        check("No kernel section found" in proc.stderr,
              f"roc-obj-ls {path} failed: {proc.stderr.strip()}")
        return []
    rows = []
    for line in proc.stdout.splitlines():
        m = ROC_LINE.match(line)
        if m:
            check(urllib.parse.unquote(m.group(3)) == path, f"roc-obj-ls names another file: {line}")
            rows.append((int(m.group(1)), m.group(2), int(m.group(4)), int(m.group(5))))
    return rows


def compare_tables(path, report):
    expected = roc_obj_ls(path)
    got = []
    for number, bundle in enumerate(report["bundles"], start=1):
        check(not bundle["compressed"], f"{path}: CCOB bundles are beyond roc-obj-ls")
        for e in bundle["entries"]:
            got.append((number, e["id"], bundle["file_offset"] + e["offset"], e["size"]))
    if got != expected:
        diff = [f"  roc-obj-ls {a}\n  hipr       {b}" for a, b in zip(expected, got) if a != b][:5]
        raise Failure(f"{path}: bundle tables differ ({len(expected)} vs {len(got)} entries)\n" + "\n".join(diff))
    return len(expected)


def readelf_metadata(path):
    """The AMDGPU metadata YAML that llvm-readelf prints, parsed."""
    proc = subprocess.run([READELF, "--notes", path], capture_output=True, text=True)
    if proc.returncode != 0:
        return None, proc.stderr.strip()
    lines = proc.stdout.splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.strip() == "---")
        end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() == "...")
    except StopIteration:
        return None, "no AMDGPU metadata in llvm-readelf output"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load("\n".join(lines[start + 1:end]), Loader=loader), None


def readelf_abi_version(path):
    """The ELF header's ABI version as llvm-readelf reads it."""
    proc = subprocess.run([READELF, "-h", path], capture_output=True, text=True)
    m = re.search(r"^\s*ABI Version:\s*(\d+)", proc.stdout, re.M)
    return int(m.group(1)) if m else None


# The members of each generic processor in the test objects (AMDGPUUsage's "Generic processors").
GENERIC_MEMBERS = {
    "gfx9-4-generic": ["gfx942", "gfx950"],
    "gfx11-generic": ["gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151"],
}
OTHERS = ["gfx90a", "gfx908", "gfx1030", "gfx1200"]


def check_generic_selection(inspect, path, target):
    """For a generic object: described for --target of each member (features left open), for no other."""
    processor = target.split(":")[0]
    if processor not in GENERIC_MEMBERS:
        return ""
    for device in GENERIC_MEMBERS[processor] + OTHERS:
        entry = run_inspect(inspect, path, ["--target", device])["bundles"][0]["entries"][0]
        member = device in GENERIC_MEMBERS[processor]
        check((entry["code_object"] is not None) == member,
              f"{path}: {processor} {'not ' if member else ''}described for --target {device}")
    return f"; {processor} selected for {', '.join(GENERIC_MEMBERS[processor])} and none of {', '.join(OTHERS)}"


def compare_entry(job):
    """Runs in a worker process. Returns an error string or None."""
    path, abs_offset, size, entry = job
    with open(path, "rb") as f:
        f.seek(abs_offset)
        data = f.read(size)
    label = f"{path}: entry {entry['id']} at {abs_offset}"
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        return f"{label}: sha256 differs"
    co = entry["code_object"]
    if co["elf_size"] != size:
        return f"{label}: elf_size {co['elf_size']} != entry size {size}"
    with tempfile.NamedTemporaryFile(suffix=".co") as tmp:
        tmp.write(data)
        tmp.flush()
        meta, err = readelf_metadata(tmp.name)
    if meta is None:
        return f"{label}: llvm-readelf: {err}"
    if list(meta.get("amdhsa.version", [])) != co["version"]:
        return f"{label}: version {meta.get('amdhsa.version')} vs {co['version']}"
    if meta.get("amdhsa.target") != co["target"]:
        return f"{label}: target {meta.get('amdhsa.target')} vs {co['target']}"
    want = meta.get("amdhsa.kernels") or []
    got = co["kernels"]
    if [str(k[".name"]) for k in want] != [k["name"] for k in got]:
        return f"{label}: kernel names differ ({len(want)} vs {len(got)} kernels)"
    for w, g in zip(want, got):
        if w[".kernarg_segment_size"] != g["kernarg_segment_size"]:
            return f"{label}: {g['name']}: kernarg_segment_size {w['.kernarg_segment_size']} vs {g['kernarg_segment_size']}"
        wa = [(a[".offset"], a[".size"], a[".value_kind"]) for a in w.get(".args", [])]
        ga = [(a["offset"], a["size"], a["value_kind"]) for a in g["args"]]
        if wa != ga:
            return f"{label}: {g['name']}: args differ\n  readelf {wa}\n  hipr    {ga}"
    return None


def metadata_jobs(path, report, select):
    jobs = []
    for bundle in report["bundles"]:
        for e in bundle["entries"]:
            if e["code_object"] is not None and select(e):
                jobs.append((path, bundle["file_offset"] + e["offset"], e["size"], e))
    return jobs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inspect", required=True)
    ap.add_argument("--rocrand", default="/usr/lib/x86_64-linux-gnu/librocrand.so.1")
    ap.add_argument("--rocsparse", default="/usr/lib/x86_64-linux-gnu/librocsparse.so.0")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--sample-every", type=int, default=10,
                    help="compare every Nth gfx90a code object of librocsparse (1: all 222)")
    ap.add_argument("--code-object", action="append", default=[],
                    help="a bare code object v5 (clang-15 -mcode-object-version=5); repeatable")
    ap.add_argument("--code-object-v6", action="append", default=[],
                    help="a bare code object v6 (testdata/make_v6_objects.sh); repeatable")
    ap.add_argument("files", nargs="+", help="hipcc-built executables and libraries")
    args = ap.parse_args()

    problems = []
    if yaml is None:
        problems.append("python3-yaml is missing: apt-get install -y python3-yaml")
    for tool, pkg in ((ROC_OBJ_LS, "hipcc"), (READELF, "llvm-15")):
        if shutil.which(tool) is None:
            problems.append(f"{tool} is missing: apt-get install -y {pkg}")
    for path, pkg in ((args.rocrand, "librocrand1"), (args.rocsparse, "librocsparse0")):
        if not os.path.exists(path):
            problems.append(f"{path} is missing: apt-get install -y {pkg}")
    for path in args.files + args.code_object + args.code_object_v6:
        if not os.path.exists(path):
            problems.append(f"{path} is missing: build the project first")
    if problems:
        print("FAIL:\n  " + "\n  ".join(problems))
        return 1

    jobs = []
    try:
        for path in args.files + [args.rocrand]:
            report = run_inspect(args.inspect, path)
            n = compare_tables(path, report)
            mine = metadata_jobs(path, report, lambda e: True)
            print(f"{path}: {len(report['bundles'])} bundles, {n} entries agree with roc-obj-ls; "
                  f"{len(mine)} code objects to compare")
            jobs += mine

        # Bare v5 code objects: one entry at offset 0 of the file, every argument (the hidden ones
        # of v5's block included) as llvm-readelf reads it.
        for version, paths in (("v5", args.code_object), ("v6", args.code_object_v6)):
            for path in paths:
                report = run_inspect(args.inspect, path)
                check(len(report["bundles"]) == 1 and len(report["bundles"][0]["entries"]) == 1,
                      f"{path}: a bare code object should be one entry")
                entry = report["bundles"][0]["entries"][0]
                co = entry["code_object"]
                abi = readelf_abi_version(path)
                check(co is not None and co["version"] == [1, 2] and co["abi_version"] == abi and
                      co["version_name"] == version and abi == int(version[1:]) - 2,
                      f"{path}: described as {co and co['version_name']} (ABI version {co and co['abi_version']}); "
                      f"llvm-readelf-15 reads ABI version {abi}, expected code object {version}")
                hidden = {a["value_kind"] for k in co["kernels"] for a in k["args"]
                          if a["value_kind"].startswith("hidden_")}
                check({"hidden_block_count_x", "hidden_group_size_x", "hidden_remainder_x"} <= hidden,
                      f"{path}: v5 hidden arguments missing: {sorted(hidden)}")
                generic = check_generic_selection(args.inspect, path, entry["target"])
                print(f"{path}: code object {version} (ABI version {abi}), {len(co['kernels'])} kernels, "
                      f"{len(hidden)} hidden argument kinds{generic}")
                jobs.append((path, 0, entry["size"], entry))

        report = run_inspect(args.inspect, args.rocsparse, ["--target", "gfx90a"])
        n = compare_tables(args.rocsparse, report)
        check(len(report["bundles"]) == 111, f"{args.rocsparse}: {len(report['bundles'])} bundles, expected 111")
        for bundle in report["bundles"]:
            for e in bundle["entries"]:
                is_gfx90a = e["target"].split(":")[0] == "gfx90a"
                check((e["code_object"] is not None) == is_gfx90a,
                      f"{args.rocsparse}: --target gfx90a described {e['id']}" if not is_gfx90a
                      else f"{args.rocsparse}: --target gfx90a skipped {e['id']}")
        gfx90a = metadata_jobs(args.rocsparse, report, lambda e: True)
        sample = gfx90a[::args.sample_every]
        print(f"{args.rocsparse}: {len(report['bundles'])} bundles, {n} entries agree with roc-obj-ls; "
              f"comparing {len(sample)} of {len(gfx90a)} gfx90a code objects")
        jobs += sample
    except Failure as e:
        print(f"FAIL: {e}")
        return 1

    errors = []
    kernels = sum(len(j[3]["code_object"]["kernels"]) for j in jobs)
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for err in pool.map(compare_entry, jobs):
            if err:
                errors.append(err)
    if errors:
        print(f"FAIL: {len(errors)} of {len(jobs)} code objects disagree with llvm-readelf:")
        for err in errors[:10]:
            print("  " + err)
        return 1
    print(f"OK: {len(jobs)} code objects ({kernels} kernels) agree with {READELF} --notes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
