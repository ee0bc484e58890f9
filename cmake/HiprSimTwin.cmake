# hipr_add_sim_twin(<name> SOURCE <file.hip> [OUTPUT_DIR <dir>] [TARGET <id>]
#                   [INCLUDE_DIRS <dir...>] [DEFINES <def...>]
#                   [CODE_OBJECT <file.co> DEPENDS <target...>])
#
# Builds the kernel twin of a program or library that hipr_hipcc_binary(<name>)
# builds (target hipcc_<name>, output ${HIPR_HIPCC_<name>}): the host-compiled
# device side of <file.hip> that the worker's sim device runs in place of the
# code object compiled from that file for TARGET (worker_service/sim/twin/).
# TARGET (a target ID, as --offload-arch takes it) defaults to
# HIPR_SIM_TWIN_TARGET, gfx90a, the target of the sim's models; it picks the
# code object and gives the twin the macros the device compile predefines
# for it (__HIP_DEVICE_COMPILE__, __gfx90a__, ...: twin_macros.py).
# With CODE_OBJECT, the twin stands for that code object instead (one made
# by another command, e.g. hipr-rtc-compile for a runtime-compiled source;
# DEPENDS names the targets that make it).
#
#   1. hipr-inspect --json reads the binary's TARGET code object: its SHA-256,
#      kernels (mangled names, argument layouts) and variables;
#   2. twin_rewrite.py (Debian's /usr/bin/python3 + python3-clang-15) keeps
#      the device side of the source, defines the device compile's macros
#      ahead of it and appends the descriptor, with explicit instantiations of
#      the template kernels the code object contains;
#   3. clang++-15 -x c++ -shared -fPIC -O2 builds it with the twin prelude;
#   4. twin_rewrite.py install checks it and copies it to
#      <OUTPUT_DIR>/<sha256 of the code object>.so: the sim finds a twin by
#      that name alone (worker --sim-kernels <OUTPUT_DIR>).
#
# OUTPUT_DIR defaults to ${CMAKE_BINARY_DIR}/sim-kernels. INCLUDE_DIRS and
# DEFINES are those the source was compiled with. A kernel of the code object
# that the twin cannot express fails the build with a message naming it, and
# so does a use of the device's long double layout macros (__LDBL_*,
# __SIZEOF_LONG_DOUBLE__, LDBL_*), which the host compile cannot honour.
# Target simtwin_<name> (part of ALL) builds it; HIPR_SIM_TWIN_<name> holds
# the path of its stamp file (<OUTPUT_DIR>/<name>.<stem>.twin: hash, library,
# source) in the caller's scope. Source changes produce a new code object, so
# a new <sha256>.so; older ones stay valid twins of older builds.
include_guard(GLOBAL)

find_program(HIPR_CLANGXX_15 clang++-15 REQUIRED)
# Debian's python3 (python3-clang-15); a pyenv python3 earlier on PATH cannot see it.
find_program(HIPR_SYSTEM_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
set(HIPR_SIM_TWIN_TARGET gfx90a CACHE STRING "the device kernel twins stand for (a target ID, as --offload-arch takes)")

function(hipr_add_sim_twin name)
  cmake_parse_arguments(ARG "" "SOURCE;OUTPUT_DIR;CODE_OBJECT;TARGET" "INCLUDE_DIRS;DEFINES;DEPENDS" ${ARGN})
  if(NOT ARG_SOURCE)
    message(FATAL_ERROR "hipr_add_sim_twin(${name}): no SOURCE")
  endif()
  if(ARG_CODE_OBJECT)
    set(binary ${ARG_CODE_OBJECT})
    set(binary_deps ${ARG_DEPENDS})
  elseif(NOT TARGET hipcc_${name} OR NOT HIPR_HIPCC_${name})
    message(FATAL_ERROR "hipr_add_sim_twin(${name}): build the program with hipr_hipcc_binary(${name}) first")
  else()
    set(binary ${HIPR_HIPCC_${name}})
    set(binary_deps hipcc_${name})
  endif()
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${CMAKE_BINARY_DIR}/sim-kernels)
  endif()
  if(NOT ARG_TARGET)
    set(ARG_TARGET ${HIPR_SIM_TWIN_TARGET})
  endif()
  # This file is included once (include_guard), from any directory.
  get_filename_component(HIPR_SIM_TWIN_DIR ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../worker_service/sim/twin ABSOLUTE)
  get_filename_component(source ${ARG_SOURCE} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  get_filename_component(source_dir ${source} DIRECTORY)
  get_filename_component(stem ${source} NAME_WE)
  set(work ${CMAKE_CURRENT_BINARY_DIR}/${name}.twin)
  set(twin_cc ${work}/${stem}.twin.cc)
  set(manifest ${work}/${stem}.twin.json)
  set(library ${work}/${stem}.twin.so)
  set(stamp ${ARG_OUTPUT_DIR}/${name}.${stem}.twin)
  set(flags)
  foreach(dir IN LISTS ARG_INCLUDE_DIRS)
    get_filename_component(dir ${dir} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND flags -I${dir})
  endforeach()
  foreach(def IN LISTS ARG_DEFINES)
    list(APPEND flags -D${def})
  endforeach()
  file(GLOB prelude CONFIGURE_DEPENDS ${HIPR_SIM_TWIN_DIR}/*.h ${HIPR_SIM_TWIN_DIR}/include/hip/*.h)
  set(rewriter ${HIPR_SIM_TWIN_DIR}/twin_rewrite.py ${HIPR_SIM_TWIN_DIR}/twin_source.py
               ${HIPR_SIM_TWIN_DIR}/twin_macros.py)

  add_custom_command(
    OUTPUT ${twin_cc} ${manifest}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${work}
    COMMAND ${HIPR_SYSTEM_PYTHON3} ${HIPR_SIM_TWIN_DIR}/twin_rewrite.py rewrite
            --source ${source} --binary ${binary} --inspect $<TARGET_FILE:hipr-inspect> --target ${ARG_TARGET}
            --output ${twin_cc} --manifest ${manifest} --depfile ${work}/${stem}.twin.d ${flags}
    DEPENDS ${source} ${binary} ${binary_deps} hipr-inspect ${rewriter}
    DEPFILE ${work}/${stem}.twin.d
    COMMENT "Kernel twin source ${twin_cc}"
    VERBATIM)
  # -fno-math-errno as the device compile (the twin source checks
  # __NO_MATH_ERRNO__); -std=c++17 as hipr_hipcc_binary() (__cplusplus).
  add_custom_command(
    OUTPUT ${stamp}
    COMMAND ${HIPR_CLANGXX_15} -x c++ -std=c++17 -O2 -fPIC -shared -fvisibility=hidden -fno-exceptions
            -fno-math-errno -Werror=global-constructors
            -I${HIPR_SIM_TWIN_DIR}/include -I${HIPR_SIM_TWIN_DIR} -iquote ${source_dir} ${flags}
            ${twin_cc} -o ${library} -Wl,-z,defs -lm
    COMMAND ${HIPR_SYSTEM_PYTHON3} ${HIPR_SIM_TWIN_DIR}/twin_rewrite.py install
            --library ${library} --manifest ${manifest} --output-dir ${ARG_OUTPUT_DIR} --stamp ${stamp}
    DEPENDS ${twin_cc} ${manifest} ${prelude} ${rewriter}
    COMMENT "Kernel twin ${name} (${stem}) -> ${ARG_OUTPUT_DIR}"
    VERBATIM)
  add_custom_target(simtwin_${name} ALL DEPENDS ${stamp})
  set(HIPR_SIM_TWIN_${name} ${stamp} PARENT_SCOPE)
endfunction()
