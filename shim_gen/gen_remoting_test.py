#!/usr/bin/python3
"""Tests of gen_remoting.py: annotations it must refuse, and the id scheme
the wire depends on. Run by ctest `gen_remoting_test` with Debian's python3:

  gen_remoting_test.py --declarations shim_gen/decls/rocm6_7.h [--include-dir DIR]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_remoting  # noqa: E402

ARGS = None


def generate(annotations, side="worker"):
    """Runs the generator on `annotations` (text); returns (exit code, stderr, out dir)."""
    tmp = tempfile.mkdtemp(prefix="gen_remoting_test.")
    path = os.path.join(tmp, "annotations.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(annotations)
    out = os.path.join(tmp, "out")
    run = subprocess.run([sys.executable, os.path.join(HERE, "gen_remoting.py"), "--annotations", path,
                          "--declarations", ARGS.declarations, "--include-dir", ARGS.include_dir,
                          "--side", side, "--out-dir", out], capture_output=True, text=True)
    return run.returncode, run.stderr, out


class RefusedAnnotations(unittest.TestCase):
    def refused(self, text, message):
        code, err, _ = generate(text)
        self.assertNotEqual(code, 0, f"accepted: {text!r}")
        self.assertIn(message, err)

    def test_pointer_needs_a_direction(self):
        self.refused("hipDeviceGetLimit\n", "pointer parameter 'pValue' needs :in, :out or :inout")

    def test_unknown_parameter(self):
        self.refused("hipDeviceGetLimit value:out\n", "no parameter named value")

    def test_undeclared_function(self):
        self.refused("hipNoSuchFunction\n", "not declared")

    def test_post_cannot_have_outputs(self):
        self.refused("hipDeviceGetLimit post pValue:out\n", "cannot have outputs")

    def test_void_pointer_needs_a_type(self):
        self.refused("hipMemPoolGetAttribute value:out\n", "needs :as=<type>")

    def test_as_names_an_unknown_enumerator(self):
        self.refused("hipMemPoolGetAttribute value:out:as=attr{hipNoSuchAttr:int32,*:uint64}\n",
                     "has no enumerator hipNoSuchAttr")

    def test_count_must_name_an_unsigned_parameter(self):
        self.refused("hipMemPoolSetAccess desc_list:in:count=mem_pool\n", "must name an unsigned integer")

    def test_strings_are_not_generated(self):
        self.refused("hipDeviceGetName name:out\n", "cannot be generated yet")

    def test_struct_pointer_fields_must_be_skipped(self):
        self.refused("hipMemPoolCreate mem_pool:out pool_props:in\n", "win32SecurityAttributes")

    def test_destroy_is_for_handles(self):
        self.refused("hipDeviceGraphMemTrim device:destroy\n", "only handles take :destroy")

    def test_duplicate_line(self):
        self.refused("hipDeviceSetLimit\nhipDeviceSetLimit\n", "duplicate function")

    def test_bad_takes_an_error_name(self):
        self.refused("hipDeviceSetMemPool device:device:bad=EINVAL\n", "bad= takes a hipError_t enumerator")

    def test_count_options_are_known(self):
        self.refused("hipMemPoolSetAccess desc_list:in:count=count,max=streams\n", "unknown count option")


class Output(unittest.TestCase):
    def test_ids_are_fnv1a_of_the_name(self):
        # The wire carries these ids; changing the scheme breaks every peer.
        self.assertEqual(gen_remoting.fnv1a32("hipDeviceGetLimit"), 0x21DC569F)
        code, err, out = generate("hipDeviceGetLimit pValue:out\n")
        self.assertEqual(code, 0, err)
        with open(os.path.join(out, "api_calls.h"), encoding="utf-8") as f:
            self.assertIn("kDeviceGetLimit = 0x21dc569f", f.read())

    def test_device_and_count_options_reach_the_client(self):
        code, err, out = generate("hipDeviceSetMemPool device:device:bad=hipErrorInvalidValue\n"
                                  "hipMemPoolSetAccess desc_list:in:count=count,max=devices\n", side="client")
        self.assertEqual(code, 0, err)
        with open(os.path.join(out, "api_entries.cc"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("if (CheckDevice(*s, device) != hipSuccess) return hipErrorInvalidValue;", text)
        # The count is checked before the list is read.
        check = text.index("if (count > static_cast<size_t>(s->device_count())) return hipErrorInvalidDevice;")
        self.assertLess(check, text.index("in.desc_list.resize(count);"))

    def test_functions_missing_from_the_installed_headers_answer_not_supported_on_hip(self):
        code, err, out = generate("hipDeviceSetLimit\nhipDeviceSetSharedMemConfig\n")
        self.assertEqual(code, 0, err)
        with open(os.path.join(out, "hip_api.cc"), encoding="utf-8") as f:
            text = f.read()
        if "hipDeviceSetLimit" in open(os.path.join(ARGS.include_dir, "hip", "hip_runtime_api.h")).read():
            self.skipTest("these HIP headers declare hipDeviceSetLimit")
        self.assertIn('NotInThisRuntime("hipDeviceSetLimit")', text)
        self.assertIn("hipDeviceSetSharedMemConfig(static_cast<hipSharedMemConfig>(in.config))", text)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--declarations", required=True)
    parser.add_argument("--include-dir", default="/usr/include")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
