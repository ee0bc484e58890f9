"""The device compile's predefined macros, for kernel twins.

hipcc's device compile for a target (clang -x hip --cuda-device-only
--offload-arch=<target>) predefines macros a host compile does not:
__HIP_DEVICE_COMPILE__, __AMDGCN__, __gfx90a__, __AMDGCN_WAVEFRONT_SIZE,
__amdgcn_target_id__ and so on, and gives a few others other values. A twin
is the device side of the program compiled by clang++-15 -x c++ for the
host, so without them every `#if __HIP_DEVICE_COMPILE__` or `#ifdef
__gfx90a__` in the program would silently take its host branch in the twin
while the code object took the device one. This module asks the real
compiler for both sets and sorts the differences:

  defined    target-identifying macros: twin_rewrite.py writes them into the
             twin source, after the prelude and before the program's first
             line, so that the program sees exactly the device compile's
             values while the prelude and the system headers it includes
             are configured for the host they run on;
  layout     the device's type layout (long double is a 64-bit double there,
             __LDBL_*, __SIZEOF_LONG_DOUBLE__): a host x86 compile cannot
             honour it, so a program that uses them is refused (see
             refused_uses()) rather than built with other values;
  by_flags   what the twin's own compile flags produce (__NO_MATH_ERRNO__
             from -fno-math-errno): the twin source checks them with #error;
  codegen    code generation details no program branches on meaningfully
             (__PIC__, __code_model_*__): the twin keeps its own.

Both sets are taken at -std=c++17, the standard hipcc (cmake/
HiprHipcc.cmake) and the twin compile (twin_rewrite.py build) both use,
so __cplusplus agrees.
"""

import re
import subprocess

from twin_source import TwinError

CLANG = "clang++-15"
LAYOUT = re.compile(r"^__(SIZEOF_\w+|(LDBL|DBL|FLT|FLT16)_\w+|BIGGEST_ALIGNMENT|POINTER_WIDTH|CHAR_BIT|"
                    r"(U?INT|INTMAX|UINTMAX|INTPTR|UINTPTR|PTRDIFF|SIZE|WCHAR|WINT|SCHAR|SHRT|LONG|LONG_LONG)_\w+|"
                    r"BYTE_ORDER)__$")
BY_FLAGS = {"__NO_MATH_ERRNO__": "-fno-math-errno"}
CODEGEN = re.compile(r"^__(PIC|pic|PIE|pie|code_model_\w*)__$")
# float.h's spellings of the layout macros: LDBL_MAX is __LDBL_MAX__, ...
FLOAT_H_NAME = re.compile(r"^(LDBL|DBL|FLT|FLT16)_(\w+)$")
FLOAT_H_ALIAS = {"TRUE_MIN": "DENORM_MIN", "HAS_SUBNORM": "HAS_DENORM"}
DEFINE = re.compile(r"^#define (\w+(?:\([^)]*\))?)(?: (.*))?$")


def predefined(args):
    """{name: value} of what `clang++-15 args -E -dM /dev/null` predefines."""
    out = subprocess.run([CLANG] + args + ["-std=c++17", "-E", "-dM", "/dev/null"], capture_output=True, text=True)
    if out.returncode != 0:
        raise TwinError("%s %s failed: %s" % (CLANG, " ".join(args), out.stderr.strip()))
    macros = {}
    for line in out.stdout.splitlines():
        m = DEFINE.match(line)
        if m:
            macros[m.group(1)] = m.group(2) or ""
    return macros


class DeviceMacros:
    """The device compile's macros for one target, sorted as above."""

    def __init__(self, target, device, host):
        self.target = target
        self.defined, self.layout, self.by_flags = [], {}, {}
        for name in sorted(set(device) | set(host)):
            if device.get(name) == host.get(name):
                continue
            if CODEGEN.match(name):
                continue
            if name not in device:
                # Defined by the host compile alone: no such macro has been
                # seen for an AMDGPU target; refuse to guess what it means.
                raise TwinError("%s defines %s for the host and not for %s; twin_macros.py does not know how a "
                                "twin should treat it" % (CLANG, name, target))
            if LAYOUT.match(name):
                self.layout[name] = device[name]
            elif name in BY_FLAGS:
                self.by_flags[name] = BY_FLAGS[name]
            else:
                self.defined.append((name, device[name]))

    def source_block(self):
        """Preprocessor text for the twin source: the defined macros, a
        check of those the compile flags produce, and of the wave size the
        sim runs (the prelude's warpSize)."""
        out = ["// ---- What the device compile for %s predefines and a host compile does not (twin_macros.py)"
               % self.target]
        for name, value in self.defined:
            out.append("#undef %s" % name.split("(")[0])
            out.append(("#define %s %s" % (name, value)).rstrip())
        for name, flag in sorted(self.by_flags.items()):
            out.append("#ifndef %s" % name)
            out.append('#error "hipr sim twins: compile twins with %s, as the device compile (%s)"' % (flag, name))
            out.append("#endif")
        wave = dict(self.defined).get("__AMDGCN_WAVEFRONT_SIZE")
        if wave is not None:
            out.append('static_assert(__AMDGCN_WAVEFRONT_SIZE == warpSize, "hipr sim twins: the sim runs waves of '
                       'warpSize (64) threads; %s has %s");' % (self.target, wave))
        return "\n".join(out) + "\n"

    def refused(self, spelling):
        """What makes identifier `spelling` a use of a layout macro (itself,
        or float.h's name for one, e.g. LDBL_EPSILON), or None."""
        if spelling in self.layout:
            return "%s (%s on the device)" % (spelling, self.layout[spelling])
        m = FLOAT_H_NAME.match(spelling)
        if m:
            name = "__%s_%s__" % (m.group(1), FLOAT_H_ALIAS.get(m.group(2), m.group(2)))
            if name in self.layout:
                return "%s (%s, %s on the device)" % (spelling, name, self.layout[name])
        return None


def device_macros(target, extra_args=()):
    """Asks the compiler for the device and host macros of `target`, with
    the program's -D/-I flags (so that its own definitions, equal on both
    sides, drop out)."""
    extra = list(extra_args)
    device = predefined(["-x", "hip", "--cuda-device-only", "-nogpuinc", "-nogpulib", "--offload-arch=" + target] +
                        extra)
    host = predefined(["-x", "c++"] + extra)
    return DeviceMacros(target, device, host)


def refused_uses(macros, files, skipped, blanked):
    """Uses of layout macros in the program's own files that reach the
    twin: identifier tokens outside the ranges the device parse skipped
    (#if branches not taken) and outside what the rewriter drops. Returns
    ['file:line:col: NAME (device value)', ...]."""
    if not macros.layout:
        return []
    found = []
    for path in files.user_files():
        for token in files.file_tokens(path):
            if token.kind.name != "IDENTIFIER":
                continue
            what = macros.refused(token.spelling)
            if what is None:
                continue
            offset = token.extent.start.offset
            if any(s <= offset < e for s, e in skipped.get(path, ())) or blanked(path, offset):
                continue
            loc = token.location
            found.append("%s:%d:%d: %s" % (path, loc.line, loc.column, what))
    return found
