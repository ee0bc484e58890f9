# hipr_add_sim_twin(<name> [SOURCE <file.hip> | SOURCES <file...>]
#                   [OUTPUT_DIR <dir>] [TARGET <id>] [ALL]
#                   [INCLUDE_DIRS <dir...>] [DEFINES <def...>]
#                   [COMPILE_OPTIONS <opt...>]
#                   [CODE_OBJECT <file.co> DEPENDS <target...>])
#
# Builds the kernel twins of a program or library that hipr_hipcc_binary(<name>)
# builds (target hipcc_<name>, output ${HIPR_HIPCC_<name>}): the host-compiled
# device side of each source, which the worker's sim device runs in place of
# the code object hipcc compiled from that source for TARGET
# (worker_service/sim/twin/). hipcc compiles each source into its own code
# object, so each source with kernels gets its own twin.
#
# Without SOURCE(S), the twins are built from the program's own SOURCES,
# INCLUDE_DIRS and COMPILE_OPTIONS as hipr_hipcc_binary(<name>) got them;
# INCLUDE_DIRS, DEFINES and COMPILE_OPTIONS given here are added. Of the
# compile options, those that change what device code means reach the twin
# (-I, -D, -U, -include, -std=, -ffast-math and the other floating-point
# flags); the rest are dropped (twin_rewrite.py classify_flags), and
# -fgpu-rdc is refused (a twin stands for one translation unit's code object).
# TARGET (a target ID, as --offload-arch takes it) defaults to
# HIPR_SIM_TWIN_TARGET, gfx90a, the target of the sim's models; it picks the
# code object and gives the twin the macros the device compile predefines for
# it (__HIP_DEVICE_COMPILE__, __gfx90a__, ...: twin_macros.py). With
# CODE_OBJECT, the twin stands for that code object instead (one made by
# another command, e.g. hipr-rtc-compile for a runtime-compiled source;
# DEPENDS names the targets that make it).
#
# Per source:
#   1. hipr-inspect --json reads the binary's TARGET code objects: SHA-256,
#      kernels (mangled names, argument layouts) and variables;
#   2. twin_rewrite.py rewrite (Debian's /usr/bin/python3 + python3-clang-15)
#      keeps the device side of the source, defines the device compile's
#      macros ahead of it and appends the descriptor, with explicit
#      instantiations of the template kernels the code object contains;
#   3. twin_rewrite.py build compiles it (clang++-15 -x c++ -shared, with the
#      twin prelude), checks it and copies it to
#      <OUTPUT_DIR>/<sha256 of the code object>.so: the sim finds a twin by
#      that name alone (worker --sim-kernels <OUTPUT_DIR>).
# A source without kernels (a host-only file of a several-source program), or
# a program without device code, needs no twin: the build says so and goes on.
#
# OUTPUT_DIR defaults to ${CMAKE_BINARY_DIR}/sim-kernels. A kernel that the
# twin cannot express (inline assembly, a use of the device's long double
# layout macros, ...) fails that twin's build with a message naming the kernel and
# the construct. Target simtwin_<name> builds the twins; it is part of ALL
# only with ALL or when HIPR_SIM_TWIN_ALL is ON (default OFF), so a twin that
# cannot be built never breaks the program's own build: build simtwin_<name>
# (or sim_twins, every twin of the project) when the sim is to run it.
# HIPR_SIM_TWIN_<name> holds the paths of its stamp files
# (<OUTPUT_DIR>/<name>.<stem>.twin: hash or "none", library, source) in the
# caller's scope. Source changes produce a new code object, so a new
# <sha256>.so; older ones stay valid twins of older builds.
#
# Part of hipr's CMake package: find_package(hipr) includes it, with the
# prelude and rewriter from <prefix>/share/hipr/twin and hipr::inspect; in
# hipr's own tree they come from the source tree and the hipr-inspect target.
include_guard(GLOBAL)

find_program(HIPR_CLANGXX_15 clang++-15 REQUIRED)
# Debian's python3 (python3-clang-15); a pyenv python3 earlier on PATH cannot see it.
find_program(HIPR_SYSTEM_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
set(HIPR_SIM_TWIN_TARGET gfx90a CACHE STRING "the device kernel twins stand for (a target ID, as --offload-arch takes)")
option(HIPR_SIM_TWIN_ALL "build every sim kernel twin as part of the default (ALL) build" OFF)

function(hipr_add_sim_twin name)
  cmake_parse_arguments(ARG "ALL" "SOURCE;OUTPUT_DIR;CODE_OBJECT;TARGET"
                        "SOURCES;INCLUDE_DIRS;DEFINES;COMPILE_OPTIONS;DEPENDS" ${ARGN})
  # The prelude and rewriter: hipr's source tree, or the installed
  # <prefix>/share/hipr/twin (this file is <prefix>/lib/cmake/hipr/).
  set(twin_dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../worker_service/sim/twin)
  if(NOT EXISTS ${twin_dir}/twin_rewrite.py)
    set(twin_dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../../../share/hipr/twin)
  endif()
  get_filename_component(twin_dir ${twin_dir} ABSOLUTE)
  set(sources ${ARG_SOURCE} ${ARG_SOURCES})
  set(include_dirs ${ARG_INCLUDE_DIRS})
  set(options ${ARG_COMPILE_OPTIONS})
  if(ARG_CODE_OBJECT)
    set(binary ${ARG_CODE_OBJECT})
    set(binary_deps ${ARG_DEPENDS})
  elseif(NOT TARGET hipcc_${name})
    message(FATAL_ERROR "hipr_add_sim_twin(${name}): build the program with hipr_hipcc_binary(${name}) first, "
                        "or name its code object with CODE_OBJECT")
  else()
    get_target_property(binary hipcc_${name} HIPR_OUTPUT)
    set(binary_deps hipcc_${name})
    if(NOT sources)
      get_target_property(sources hipcc_${name} HIPR_SOURCES)
      get_target_property(program_dirs hipcc_${name} HIPR_INCLUDE_DIRS)
      get_target_property(program_options hipcc_${name} HIPR_COMPILE_OPTIONS)
      list(PREPEND include_dirs ${program_dirs})
      list(PREPEND options ${program_options})
    endif()
  endif()
  if(NOT sources)
    message(FATAL_ERROR "hipr_add_sim_twin(${name}): no SOURCE")
  endif()
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${CMAKE_BINARY_DIR}/sim-kernels)
  endif()
  if(NOT ARG_TARGET)
    set(ARG_TARGET ${HIPR_SIM_TWIN_TARGET})
  endif()
  if(TARGET hipr-inspect)  # hipr's own tree
    set(inspect $<TARGET_FILE:hipr-inspect>)
    set(inspect_deps hipr-inspect)
  else()  # the installed package
    set(inspect $<TARGET_FILE:hipr::inspect>)
    set(inspect_deps $<TARGET_FILE:hipr::inspect>)
  endif()
  set(flags)
  foreach(dir IN LISTS include_dirs)
    get_filename_component(dir ${dir} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND flags -I${dir})
  endforeach()
  foreach(def IN LISTS ARG_DEFINES)
    list(APPEND flags -D${def})
  endforeach()
  list(APPEND flags ${options})
  file(GLOB prelude CONFIGURE_DEPENDS ${twin_dir}/*.h ${twin_dir}/include/hip/*.h)
  set(rewriter ${twin_dir}/twin_rewrite.py ${twin_dir}/twin_source.py
               ${twin_dir}/twin_macros.py)
  set(work ${CMAKE_CURRENT_BINARY_DIR}/${name}.twin)
  set(stamps)
  foreach(source IN LISTS sources)
    get_filename_component(source ${source} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    get_filename_component(stem ${source} NAME_WE)
    set(twin_cc ${work}/${stem}.twin.cc)
    set(manifest ${work}/${stem}.twin.json)
    set(stamp ${ARG_OUTPUT_DIR}/${name}.${stem}.twin)
    add_custom_command(
      OUTPUT ${twin_cc} ${manifest}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${work}
      COMMAND ${HIPR_SYSTEM_PYTHON3} ${twin_dir}/twin_rewrite.py rewrite
              --source ${source} --binary ${binary} --inspect ${inspect} --target ${ARG_TARGET}
              --output ${twin_cc} --manifest ${manifest} --depfile ${work}/${stem}.twin.d -- ${flags}
      DEPENDS ${source} ${binary} ${binary_deps} ${inspect_deps} ${rewriter}
      DEPFILE ${work}/${stem}.twin.d
      COMMENT "Kernel twin source ${twin_cc}"
      VERBATIM)
    add_custom_command(
      OUTPUT ${stamp}
      COMMAND ${HIPR_SYSTEM_PYTHON3} ${twin_dir}/twin_rewrite.py build
              --twin-source ${twin_cc} --manifest ${manifest} --library ${work}/${stem}.twin.so
              --output-dir ${ARG_OUTPUT_DIR} --stamp ${stamp} --twin-dir ${twin_dir} -- ${flags}
      DEPENDS ${twin_cc} ${manifest} ${prelude} ${rewriter}
      COMMENT "Kernel twin ${name} (${stem}) -> ${ARG_OUTPUT_DIR}"
      VERBATIM)
    list(APPEND stamps ${stamp})
  endforeach()
  if(ARG_ALL OR HIPR_SIM_TWIN_ALL)
    set(all ALL)
  else()
    set(all)
  endif()
  add_custom_target(simtwin_${name} ${all} DEPENDS ${stamps})
  if(NOT TARGET sim_twins)
    add_custom_target(sim_twins)
  endif()
  add_dependencies(sim_twins simtwin_${name})
  set(HIPR_SIM_TWIN_${name} ${stamps} PARENT_SCOPE)
endfunction()
