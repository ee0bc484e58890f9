# hipr_hipcc_binary(<name> SOURCES <src...> [SHARED [NO_HIP_RUNTIME] | GENCO]
#                   [OUTPUT_DIR <dir>] [INCLUDE_DIRS <dir...>]
#                   [COMPILE_OPTIONS <opt...>] [LINK_OPTIONS <opt...>]
#                   [DEPENDS <file-or-target...>])
#
# Builds a program (or, with SHARED, lib<name>.so with SONAME lib<name>.so)
# with Debian's real hipcc, exactly as a user would:
#   hipcc --offload-arch=gfx90a -O2 -std=c++17 ... -o <out>
# so it carries DT_NEEDED libamdhip64.so.5 and a gfx90a fat binary. Needs no
# GPU. The output goes to OUTPUT_DIR (default: the current binary dir) and a
# target hipcc_<name> (part of ALL) builds it; HIPR_HIPCC_<name> holds the
# output path in the caller's scope. DEPENDS lists files or hipcc_* targets
# the command needs (e.g. a library it links). The target keeps SOURCES,
# INCLUDE_DIRS and COMPILE_OPTIONS for hipr_add_sim_twin(<name>). Part of
# hipr's CMake package (find_package(hipr); docs/operations.md).
#
# GENCO: `hipcc --genco`, a bare offload bundle <name>.co of device code
# only, as programs load with hipModuleLoad.
#
# SHARED NO_HIP_RUNTIME: hipcc compiles, the C++ compiler links, so the
# library has no DT_NEEDED libamdhip64 (its HIP references bind to whatever
# runtime the process has). glibc then need not initialise the runtime before
# it: under LD_PRELOAD its constructor registers its fat binary before the
# preloaded stub's constructors run.
include_guard(GLOBAL)

find_program(HIPR_HIPCC hipcc REQUIRED)

# More targets for the e2e programs, beside gfx90a (which the sim's twins
# stand for): the GPU acceptance run builds them for the node's own GPU
# (deploy/hipr-dev gpu-check).
set(HIPR_E2E_EXTRA_ARCHS "" CACHE STRING "more --offload-arch targets for the e2e programs")

function(hipr_hipcc_binary name)
  cmake_parse_arguments(ARG "SHARED;NO_HIP_RUNTIME;GENCO" "OUTPUT_DIR" "SOURCES;INCLUDE_DIRS;COMPILE_OPTIONS;LINK_OPTIONS;DEPENDS" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "hipr_hipcc_binary(${name}): no SOURCES")
  endif()
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  if(ARG_GENCO)
    set(output ${ARG_OUTPUT_DIR}/${name}.co)
    set(kind_flags --genco)
  elseif(ARG_SHARED)
    set(output ${ARG_OUTPUT_DIR}/lib${name}.so)
    set(kind_flags -shared -fPIC -Wl,-soname,lib${name}.so)
  else()
    set(output ${ARG_OUTPUT_DIR}/${name})
    set(kind_flags)
  endif()
  set(sources)
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND sources ${abs})
  endforeach()
  set(includes)
  set(include_dirs)
  foreach(dir IN LISTS ARG_INCLUDE_DIRS)
    get_filename_component(dir ${dir} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND include_dirs ${dir})
    list(APPEND includes -I${dir})
  endforeach()
  set(file_deps)
  set(target_deps)
  foreach(dep IN LISTS ARG_DEPENDS)
    if(TARGET ${dep})
      list(APPEND target_deps ${dep})
    else()
      list(APPEND file_deps ${dep})
    endif()
  endforeach()
  set(hipcc ${HIPR_HIPCC} --offload-arch=gfx90a)
  foreach(arch IN LISTS HIPR_E2E_EXTRA_ARCHS)
    list(APPEND hipcc --offload-arch=${arch})
  endforeach()
  list(APPEND hipcc -O2 -std=c++17 ${ARG_COMPILE_OPTIONS})
  if(ARG_NO_HIP_RUNTIME)
    if(NOT ARG_SHARED)
      message(FATAL_ERROR "hipr_hipcc_binary(${name}): NO_HIP_RUNTIME needs SHARED")
    endif()
    set(objects)
    set(compile_commands)
    foreach(src IN LISTS sources)
      get_filename_component(stem ${src} NAME_WE)
      set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}.dir/${stem}.o)
      list(APPEND objects ${obj})
      list(APPEND compile_commands
        COMMAND ${hipcc} -fPIC ${includes} -c ${src} -o ${obj})
    endforeach()
    set(build_commands
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/${name}.dir
      ${compile_commands}
      COMMAND ${CMAKE_CXX_COMPILER} ${kind_flags} ${objects} -o ${output} ${ARG_LINK_OPTIONS})
  else()
    set(build_commands
      COMMAND ${hipcc} ${kind_flags} ${includes} ${sources} -o ${output} ${ARG_LINK_OPTIONS})
  endif()
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${ARG_OUTPUT_DIR}
    ${build_commands}
    DEPENDS ${sources} ${file_deps} ${target_deps}
    COMMENT "hipcc ${output}"
    VERBATIM)
  add_custom_target(hipcc_${name} ALL DEPENDS ${output})
  if(target_deps)
    add_dependencies(hipcc_${name} ${target_deps})
  endif()
  # What hipr_add_sim_twin(<name>) builds the twins from by default.
  set_target_properties(hipcc_${name} PROPERTIES
    HIPR_OUTPUT ${output} HIPR_SOURCES "${sources}" HIPR_INCLUDE_DIRS "${include_dirs}"
    HIPR_COMPILE_OPTIONS "${ARG_COMPILE_OPTIONS}")
  set(HIPR_HIPCC_${name} ${output} PARENT_SCOPE)
endfunction()
