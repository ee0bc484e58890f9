#!/usr/bin/python3
"""What twin builds refuse, and what they drop (sim_twin_rewrite_test).

Runs worker_service/sim/twin/twin_rewrite.py on small HIP sources against a
hand-written `hipr-inspect --json` answer (no hipcc needed), then clang++-15
with the twin prelude where the failure is the compiler's. Run by ctest with
Debian's /usr/bin/python3 (python3-clang-15):

  twin_rewrite_test.py --twin-dir worker_service/sim/twin
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

TWIN_DIR = None
SHA = "ab" * 32


def inspect_json(kernels, variables=()):
    return {"bundles": [{"entries": [{
        "id": "hipv4-amdgcn-amd-amdhsa--gfx90a", "target": "gfx90a", "sha256": SHA,
        "code_object": {"kernels": [{"name": k, "args": []} for k in kernels],
                        "variables": [{"name": n, "size": s} for n, s in variables]}}]}]}


class TwinBuild:
    """Rewrites (and optionally compiles) one source in a temporary dir."""

    def __init__(self, test, source, kernels, variables=()):
        self.dir = tempfile.TemporaryDirectory()
        test.addCleanup(self.dir.cleanup)
        self.source = os.path.join(self.dir.name, "prog.hip")
        with open(self.source, "w") as f:
            f.write(source)
        self.inspect = os.path.join(self.dir.name, "inspect.json")
        with open(self.inspect, "w") as f:
            json.dump(inspect_json(kernels, variables), f)
        self.output = os.path.join(self.dir.name, "prog.twin.cc")

    def rewrite(self):
        return subprocess.run(
            ["/usr/bin/python3", os.path.join(TWIN_DIR, "twin_rewrite.py"), "rewrite", "--source", self.source,
             "--binary", "prog", "--inspect-json", self.inspect, "--output", self.output,
             "--manifest", self.output + ".json"], capture_output=True, text=True)

    def compile(self):
        return subprocess.run(
            ["clang++-15", "-x", "c++", "-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden",
             "-fno-exceptions", "-Werror=global-constructors", "-I" + os.path.join(TWIN_DIR, "include"),
             "-I" + TWIN_DIR, self.output, "-o", self.output + ".so", "-Wl,-z,defs"],
            capture_output=True, text=True)


class RewriteRefusals(unittest.TestCase):
    def test_kernel_the_source_lacks_is_named(self):
        src = "#include <hip/hip_runtime.h>\n__global__ void a() {}\n"
        b = TwinBuild(self, src, ["_Z1av", "_Z13not_in_sourcev"])
        r = b.rewrite()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("_Z13not_in_sourcev", r.stderr)
        self.assertNotIn("_Z1av", r.stderr)

    def test_template_kernel_of_a_lambda_is_named(self):
        src = "#include <hip/hip_runtime.h>\ntemplate <typename F> __global__ void apply(F f) { f(1); }\n"
        r = TwinBuild(self, src, ["_Z5applyIZ4mainEUliE_EvT_"]).rewrite()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("_Z5applyIZ4mainEUliE_EvT_", r.stderr)
        self.assertIn("lambda", r.stderr)

    def test_managed_variable_without_its_code_object_pair_is_refused(self):
        # clang emits `m` (the pointer) and `m.managed` (the bytes); a code
        # object with only one of them is not what the source compiles to.
        r = TwinBuild(self, "#include <hip/hip_runtime.h>\n__managed__ int m;\n__global__ void a() { m = 1; }\n",
                      ["_Z1av"], [("m", 4)]).rewrite()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("m.managed", r.stderr)
        self.assertIn("__managed__", r.stderr)

    def test_managed_variable_goes_through_its_pointer(self):
        src = ("#include <hip/hip_runtime.h>\n__managed__ int m = 3;\n__managed__ float v[4];\n"
               "__global__ void a() { m += 1; v[2] = m; }\n")
        b = TwinBuild(self, src, ["_Z1av"], [("m", 8), ("m.managed", 4), ("v", 8), ("v.managed", 16)])
        r = b.rewrite()
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(b.output) as f:
            text = f.read()
        # Both code-object variables are bound, the pointer to the twin's
        # pointer storage, and the kernel dereferences the bound pointer.
        for line in ('{"m.managed", sizeof(::m__hipr_init), &::m__hipr_init}',
                     '{"m", sizeof(::m__hipr_mptr), &::m__hipr_mptr}',
                     '{"v", sizeof(::v__hipr_mptr), &::v__hipr_mptr}',
                     "**static_cast<decltype(m__hipr_init)**>"):
            self.assertIn(line, text)
        self.assertNotIn("__managed__", text.split("Kernel twin descriptor")[0])
        c = b.compile()
        self.assertEqual(c.returncode, 0, c.stderr)

    def test_device_variable_used_through_a_macro_is_refused(self):
        src = ("#include <hip/hip_runtime.h>\n__device__ int counter;\n#define C counter\n"
               "__global__ void a() { C = 1; }\n")
        r = TwinBuild(self, src, ["_Z1av"], [("counter", 4)]).rewrite()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("counter is used through a macro", r.stderr)
        self.assertIn("prog.hip:4", r.stderr)

    def test_unparsable_source_reports_libclang_errors(self):
        r = TwinBuild(self, "#include <hip/hip_runtime.h>\n__global__ void a( {}\n", ["_Z1av"]).rewrite()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("cannot parse", r.stderr)


class PreludeRefusals(unittest.TestCase):
    def test_warp_intrinsics_fail_to_compile_with_a_clear_message(self):
        src = "#include <hip/hip_runtime.h>\n__global__ void w(int* p) { p[0] = __shfl_xor(p[0], 1); }\n"
        b = TwinBuild(self, src, ["_Z1wPi"])
        self.assertEqual(b.rewrite().returncode, 0)
        c = b.compile()
        self.assertNotEqual(c.returncode, 0)
        self.assertIn("__shfl_xor (a warp-level intrinsic) is not supported", c.stderr)
        self.assertIn("prog.hip:2", c.stderr)  # Messages point at the original source.

    def test_half_precision_header_is_refused(self):
        src = "#include <hip/hip_runtime.h>\n#include <hip/hip_fp16.h>\n__global__ void h() {}\n"
        b = TwinBuild(self, src, ["_Z1hv"])
        self.assertEqual(b.rewrite().returncode, 0)
        c = b.compile()
        self.assertNotEqual(c.returncode, 0)
        self.assertIn("half precision", c.stderr)


class HostCodeIsDropped(unittest.TestCase):
    def test_host_functions_globals_and_members_are_gone(self):
        src = """#include <hip/hip_runtime.h>
#include <string>
#include <vector>
static std::vector<int> g_table(100, 1);  // A static initialiser.
std::string g_name = "host";
struct Buffer {
  float* p;
  void Allocate(size_t n) { (void)hipMalloc(&p, n); }
  __device__ float& operator[](int i) { return p[i]; }
};
[[nodiscard]] int HostOnly() { return static_cast<int>(g_table.size()); }
__global__ void k(Buffer b) { b[threadIdx.x] = 1.0f; }
int main() { Buffer b; b.Allocate(4); k<<<1, 1>>>(b); return HostOnly(); }
"""
        b = TwinBuild(self, src, ["_Z1k6Buffer"])
        r = b.rewrite()
        self.assertEqual(r.returncode, 0, r.stderr)
        text = open(b.output).read()
        for gone in ("hipMalloc", "g_table", "g_name", "HostOnly", "main", "<<<", "nodiscard"):
            self.assertNotIn(gone, text)
        self.assertIn("operator[]", text)
        c = b.compile()
        self.assertEqual(c.returncode, 0, c.stderr)
        nm = subprocess.run(["llvm-nm-15", b.output + ".so"], capture_output=True, text=True).stdout
        self.assertNotIn("_GLOBAL__sub_I", nm)  # No static initialiser in the twin.
        dyn = subprocess.run(["llvm-nm-15", "-D", "--defined-only", b.output + ".so"], capture_output=True,
                             text=True).stdout.split()
        self.assertIn("hipr_twin_module", dyn)  # The one export.


def main():
    global TWIN_DIR
    p = argparse.ArgumentParser()
    p.add_argument("--twin-dir", required=True)
    args, rest = p.parse_known_args()
    TWIN_DIR = os.path.abspath(args.twin_dir)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
