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


def inspect_json(kernels, variables=(), targets=(("gfx90a", SHA),)):
    return {"bundles": [{"entries": [{
        "id": "hipv4-amdgcn-amd-amdhsa--" + target, "target": target, "sha256": sha,
        "code_object": {"kernels": [{"name": k, "args": []} for k in kernels],
                        "variables": [{"name": n, "size": s} for n, s in variables]}} for target, sha in targets]}]}


class TwinBuild:
    """Rewrites (and optionally compiles) one source in a temporary dir."""

    def __init__(self, test, source, kernels, variables=(), targets=(("gfx90a", SHA),)):
        self.dir = tempfile.TemporaryDirectory()
        test.addCleanup(self.dir.cleanup)
        self.source = os.path.join(self.dir.name, "prog.hip")
        with open(self.source, "w") as f:
            f.write(source)
        self.inspect = os.path.join(self.dir.name, "inspect.json")
        with open(self.inspect, "w") as f:
            json.dump(inspect_json(kernels, variables, targets), f)
        self.output = os.path.join(self.dir.name, "prog.twin.cc")

    def rewrite(self, *extra):
        return subprocess.run(
            ["/usr/bin/python3", os.path.join(TWIN_DIR, "twin_rewrite.py"), "rewrite", "--source", self.source,
             "--binary", "prog", "--inspect-json", self.inspect, "--output", self.output,
             "--manifest", self.output + ".json"] + list(extra), capture_output=True, text=True)

    def text(self):
        with open(self.output) as f:
            return f.read()

    def compile(self, flags=("-fno-math-errno",)):
        # As cmake/HiprSimTwin.cmake compiles twins.
        return subprocess.run(
            ["clang++-15", "-x", "c++", "-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden",
             "-fno-exceptions", "-Werror=global-constructors", "-I" + os.path.join(TWIN_DIR, "include"),
             "-I" + TWIN_DIR] + list(flags) + [self.output, "-o", self.output + ".so", "-Wl,-z,defs"],
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

    def test_inline_assembly_is_refused_naming_the_kernel(self):
        src = ("#include <hip/hip_runtime.h>\n__global__ void spin(int* p) {\n"
               "  asm volatile(\"s_sleep 1\");\n  p[0] = 1;\n}\n")
        r = TwinBuild(self, src, ["_Z4spinPi"]).rewrite()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("spin uses inline assembly", r.stderr)
        self.assertIn("prog.hip:3", r.stderr)

    def test_unparsable_source_reports_libclang_errors(self):
        r = TwinBuild(self, "#include <hip/hip_runtime.h>\n__global__ void a( {}\n", ["_Z1av"]).rewrite()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("cannot parse", r.stderr)


class PreludeRefusals(unittest.TestCase):
    def test_warp_intrinsics_compile(self):
        src = ("#include <hip/hip_runtime.h>\n__global__ void w(int* p) {\n"
               "  p[0] = __shfl_xor(p[0], 1) + __shfl(p[1], 2, 16) + static_cast<int>(__ballot(p[2] > 0));\n}\n")
        b = TwinBuild(self, src, ["_Z1wPi"])
        self.assertEqual(b.rewrite().returncode, 0)
        c = b.compile()
        self.assertEqual(c.returncode, 0, c.stderr)

    def test_bfloat16_header_is_refused(self):
        src = "#include <hip/hip_runtime.h>\n#include <hip/hip_bfloat16.h>\n__global__ void h() {}\n"
        b = TwinBuild(self, src, ["_Z1hv"])
        self.assertEqual(b.rewrite().returncode, 0)
        c = b.compile()
        self.assertNotEqual(c.returncode, 0)
        self.assertIn("bfloat16", c.stderr)


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


class DeviceMacros(unittest.TestCase):
    """The twin sees the macros the device compile predefines for its target."""

    def test_twin_takes_the_device_compiles_branches(self):
        src = """#include <hip/hip_runtime.h>
#if !defined(__HIP_DEVICE_COMPILE__) || !defined(__gfx90a__) || __AMDGCN_WAVEFRONT_SIZE != 64
#error "host branch"
#endif
#ifndef __AMDGCN__
#error "host branch"
#endif
static_assert(__amdgcn_target_id__[5] == 'a', "gfx90a");
__global__ void k(int* p) {
#if defined(__HIP_DEVICE_COMPILE__)
  p[0] = __HIP_MEMORY_SCOPE_AGENT;
#else
  p[0] = host_only_function();
#endif
}
"""
        b = TwinBuild(self, src, ["_Z1kPi"])
        r = b.rewrite()
        self.assertEqual(r.returncode, 0, r.stderr)
        text = b.text()
        for line in ("#define __HIP_DEVICE_COMPILE__ 1", "#define __gfx90a__ 1", "#define __AMDGCN_WAVEFRONT_SIZE 64",
                     '#define __amdgcn_target_id__ "gfx90a"', "#define __HIP_MEMORY_SCOPE_AGENT 4"):
            self.assertIn(line, text)
        # After the prelude, before the program's first line.
        self.assertLess(text.index('#include "hipr_twin_prelude.h"'), text.index("#define __HIP_DEVICE_COMPILE__"))
        self.assertLess(text.index("#define __HIP_DEVICE_COMPILE__"), text.index('#line 1 "'))
        self.assertNotIn("__LDBL_", text)  # Not honoured: refused when used.
        c = b.compile()
        self.assertEqual(c.returncode, 0, c.stderr)

    def test_a_twin_needs_the_device_compiles_math_errno(self):
        b = TwinBuild(self, "#include <hip/hip_runtime.h>\n__global__ void k() {}\n", ["_Z1kv"])
        self.assertEqual(b.rewrite().returncode, 0)
        c = b.compile(flags=())
        self.assertNotEqual(c.returncode, 0)
        self.assertIn("-fno-math-errno", c.stderr)

    def test_target_picks_the_code_object_and_the_macros(self):
        other = "cd" * 32
        src = "#include <hip/hip_runtime.h>\n__global__ void k(int* p) { p[0] = __GFX9__; }\n"
        b = TwinBuild(self, src, ["_Z1kPi"], targets=(("gfx90a", SHA), ("gfx908", other)))
        r = b.rewrite("--target", "gfx908")
        self.assertEqual(r.returncode, 0, r.stderr)
        text = b.text()
        self.assertIn("#define __gfx908__ 1", text)
        self.assertIn('#define __amdgcn_processor__ "gfx908"', text)
        self.assertNotIn("__gfx90a__", text)
        self.assertIn('"%s"' % other, text)  # The gfx908 code object's hash.
        self.assertNotIn(SHA, text)
        c = b.compile()
        self.assertEqual(c.returncode, 0, c.stderr)
        r = TwinBuild(self, src, ["_Z1kPi"], targets=(("gfx90a", SHA),)).rewrite("--target", "gfx906")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no gfx906 code object", r.stderr)

    def test_a_wave32_target_does_not_compile(self):
        b = TwinBuild(self, "#include <hip/hip_runtime.h>\n__global__ void k() {}\n", ["_Z1kv"],
                      targets=(("gfx1030", SHA),))
        r = b.rewrite("--target", "gfx1030")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("#define __AMDGCN_WAVEFRONT_SIZE 32", b.text())
        c = b.compile()
        self.assertNotEqual(c.returncode, 0)
        self.assertIn("the sim runs waves of warpSize (64) threads; gfx1030 has 32", c.stderr)

    def test_long_double_layout_macros_are_refused(self):
        # The device's long double is a 64-bit double; the twin's, compiled
        # for x86-64, is the 80-bit x87 type.
        src = """#include <hip/hip_runtime.h>
#include <cfloat>
#if __SIZEOF_LONG_DOUBLE__ == 8
#define TINY LDBL_EPSILON
#endif
__global__ void k(double* p) { p[0] = TINY; p[1] = __LDBL_MANT_DIG__; }
"""
        r = TwinBuild(self, src, ["_Z1kPd"]).rewrite()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("long double", r.stderr)
        for use in ("prog.hip:3:5: __SIZEOF_LONG_DOUBLE__ (8 on the device)",
                    "prog.hip:4:14: LDBL_EPSILON (__LDBL_EPSILON__, 2.2204460492503131e-16L on the device)",
                    "prog.hip:6:52: __LDBL_MANT_DIG__ (53 on the device)"):
            self.assertIn(use, r.stderr)

    def test_long_double_macros_the_twin_never_sees_are_fine(self):
        # Host code the twin drops, and #if branches the device compile skips.
        src = """#include <hip/hip_runtime.h>
#include <cfloat>
#ifndef __HIP_DEVICE_COMPILE__
static_assert(LDBL_MANT_DIG == 64, "x87");
#endif
long double HostEpsilon() { return LDBL_EPSILON; }
__global__ void k(double* p) { p[0] = DBL_EPSILON; }
int main() { return HostEpsilon() > 0; }
"""
        b = TwinBuild(self, src, ["_Z1kPd"])
        r = b.rewrite()
        self.assertEqual(r.returncode, 0, r.stderr)
        c = b.compile()
        self.assertEqual(c.returncode, 0, c.stderr)


class SeveralDeclarators(unittest.TestCase):
    """Declarations of several variables or typedefs at namespace scope."""

    def test_host_variables_beside_kept_declarations_are_dropped(self):
        src = """#include <hip/hip_runtime.h>
#include <string>
static int a = 0, b = 0;
const int kOne = 1, *g_one = &kOne;
std::string g_name = "x", g_other;
typedef struct { int v; } Value, *ValuePtr;
static struct Tally { int n; } g_tally, g_tallies[4];
__global__ void k(int* o) { Value v = {kOne}; Tally t = {v.v}; o[0] = t.n; }
int main() { return a + b + *g_one + g_tally.n + static_cast<int>(g_name.size()); }
"""
        b = TwinBuild(self, src, ["_Z1kPi"])
        r = b.rewrite()
        self.assertEqual(r.returncode, 0, r.stderr)
        text = b.text().split("Kernel twin descriptor")[0]
        for gone in ("a = 0", "b = 0", "g_one", "g_name", "g_other", "g_tally", "static struct"):
            self.assertNotIn(gone, text)
        for kept in ("const int kOne = 1;", "typedef struct { int v; } Value, *ValuePtr;", "struct Tally { int n; }"):
            self.assertIn(kept, text)
        c = b.compile()
        self.assertEqual(c.returncode, 0, c.stderr)
        nm = subprocess.run(["llvm-nm-15", b.output + ".so"], capture_output=True, text=True).stdout
        self.assertNotIn("_GLOBAL__sub_I", nm)  # g_name's constructor is gone.

    def test_device_variables_of_one_declaration(self):
        src = """#include <hip/hip_runtime.h>
__device__ int x = 3, *p = nullptr, z[4] = {1, 2, 3, 4};
namespace ns { __constant__ float c1 = 1.5f, c2[2] = {2.5f, 3.5f}; }
__managed__ int m1 = 5, m2;
__global__ void k(int* o) { o[0] = x + z[2] + (p == nullptr) + m1 + m2; o[1] = ns::c1 + ns::c2[1]; }
"""
        variables = [("x", 4), ("p", 8), ("z", 16), ("_ZN2ns2c1E", 4), ("_ZN2ns2c2E", 8), ("m1", 8),
                     ("m1.managed", 4), ("m2", 8), ("m2.managed", 4)]
        b = TwinBuild(self, src, ["_Z1kPi"], variables)
        r = b.rewrite()
        self.assertEqual(r.returncode, 0, r.stderr)
        text = b.text()
        self.assertIn("static int x__hipr_init = 3, *p__hipr_init = nullptr, z__hipr_init[4] = {1, 2, 3, 4};", text)
        for line in ('{"x", sizeof(::x__hipr_init), &::x__hipr_init}',
                     '{"z", sizeof(::z__hipr_init), &::z__hipr_init}',
                     '{"_ZN2ns2c2E", sizeof(::ns::c2__hipr_init), &::ns::c2__hipr_init}',
                     '{"m2.managed", sizeof(::m2__hipr_init), &::m2__hipr_init}',
                     '{"m2", sizeof(::m2__hipr_mptr), &::m2__hipr_mptr}'):
            self.assertIn(line, text)
        c = b.compile()
        self.assertEqual(c.returncode, 0, c.stderr)

    def test_dropping_a_first_declarator_alone_is_refused(self):
        src = ("#include <hip/hip_runtime.h>\nint h = 0;\nconst int *g_p = &h, kOne = 1;\n"
               "__global__ void k(int* o) { o[0] = kOne; }\n")
        r = TwinBuild(self, src, ["_Z1kPi"]).rewrite()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("prog.hip:3:12: the declaration of g_p also declares kOne", r.stderr)
        self.assertIn("declare it separately", r.stderr)

    def test_device_variable_initialised_from_another_is_refused(self):
        # The loader points `p` at the device copy of `x`; a twin copies its
        # initial bytes without relocating them.
        src = "#include <hip/hip_runtime.h>\n__device__ int x = 3, *p = &x;\n__global__ void k(int* o) { o[0] = *p; }\n"
        r = TwinBuild(self, src, ["_Z1kPi"], [("x", 4), ("p", 8)]).rewrite()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("prog.hip:2:29: the initialiser of device variable p refers to device variable x", r.stderr)


class ProgramFlags(unittest.TestCase):
    """The program's compile flags after --: what reaches the twin."""

    def test_flags_that_change_device_code_reach_the_twin(self):
        b = TwinBuild(self, "#include <hip/hip_runtime.h>\n"
                            "#ifndef SCALE\n#error SCALE did not reach the parse\n#endif\n"
                            "__global__ void k(float* p) { p[threadIdx.x] *= SCALE; }\n", ["_Z1kPf"])
        self.assertNotEqual(b.rewrite().returncode, 0)
        r = b.rewrite("--", "-O3", "-Wall", "--offload-arch=gfx90a", "-DSCALE=2.5f", "-std=c++17")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(b.compile(("-fno-math-errno", "-DSCALE=2.5f")).returncode, 0)

    def test_relocatable_device_code_is_refused(self):
        b = TwinBuild(self, "__global__ void k(int* p) {}\n", ["_Z1kPi"])
        r = b.rewrite("--", "-fgpu-rdc")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("-fgpu-rdc", r.stderr)

    def test_a_source_without_kernels_needs_no_twin(self):
        # A host-only file of a program whose kernels are in another file.
        b = TwinBuild(self, "#include <hip/hip_runtime.h>\nint helper(int x) { return x + 1; }\n", ["_Z5otherPi"])
        r = b.rewrite()
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(b.output + ".json") as f:
            manifest = json.load(f)
        self.assertIsNone(manifest["sha256"])
        self.assertIn("defines no kernels", manifest["none"])
        stamp = os.path.join(b.dir.name, "prog.twin")
        built = subprocess.run(
            ["/usr/bin/python3", os.path.join(TWIN_DIR, "twin_rewrite.py"), "build", "--twin-source", b.output,
             "--manifest", b.output + ".json", "--library", b.output + ".so", "--output-dir",
             os.path.join(b.dir.name, "out"), "--stamp", stamp], capture_output=True, text=True)
        self.assertEqual(built.returncode, 0, built.stderr)
        self.assertIn("no twin for", built.stdout)
        self.assertFalse(os.path.exists(b.output + ".so"))
        with open(stamp) as f:
            self.assertIn("none it defines no kernels", f.read())

    def test_classify_flags(self):
        sys.path.insert(0, TWIN_DIR)
        import twin_rewrite
        both, dropped, unknown = twin_rewrite.classify_flags(
            ["-I", "inc", "-Iinc2", "-DX=1", "-UY", "-std=c++20", "-ffast-math", "-include", "pre.h", "-O3", "-g",
             "-Wall", "--offload-arch=gfx90a", "-o", "prog", "a.hip", "-fPIC", "-Wl,-rpath,x", "-frobnicate"])
        self.assertEqual(both, ["-I", "inc", "-Iinc2", "-DX=1", "-UY", "-std=c++20", "-ffast-math", "-include",
                                "pre.h"])
        self.assertEqual(dropped, ["-O3", "-g", "-Wall", "--offload-arch=gfx90a", "-o", "prog", "a.hip", "-fPIC",
                                   "-Wl,-rpath,x"])
        self.assertEqual(unknown, ["-frobnicate"])


def main():
    global TWIN_DIR
    p = argparse.ArgumentParser()
    p.add_argument("--twin-dir", required=True)
    args, rest = p.parse_known_args()
    TWIN_DIR = os.path.abspath(args.twin_dir)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
