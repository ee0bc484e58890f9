# hipr_generate_remoting(SIDE client|worker OUT_DIR <dir> ANNOTATIONS <file>
#                        [DECLARATIONS <file>...])
#
# Adds a build-time custom command that runs shim_gen/gen_remoting.py (with
# Debian's /usr/bin/python3) to write the generated remoting of the functions
# in ANNOTATIONS into OUT_DIR (see the script's docstring for the files), and
# sets in the caller's scope:
#   HIPR_REMOTING_DIR      OUT_DIR, to add to include directories
#   HIPR_REMOTING_SOURCES  client: api_entries.cc; worker: api_dispatch.cc
#   HIPR_REMOTING_HIP_SRC  worker only: hip_api.cc (the hip device module)
# Nothing generated is checked in; ctest `remoting_generated_deterministic`
# checks that the output depends on the inputs alone.

set(HIPR_GEN_PYTHON /usr/bin/python3 CACHE FILEPATH
    "Python with python3-clang (Debian's), used to run shim_gen generators")

# The generator's inputs, as both functions below pass them: sets out_dir,
# annotations, declaration_args and include_args in the caller's scope.
macro(_hipr_remoting_inputs)
  get_filename_component(out_dir "${ARG_OUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  get_filename_component(annotations "${ARG_ANNOTATIONS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(declaration_args)
  foreach(file IN LISTS ARG_DECLARATIONS)
    list(APPEND declaration_args --declarations "${file}")
  endforeach()
  set(include_args)
  if(HIP_INCLUDE_DIR)
    set(include_args --include-dir "${HIP_INCLUDE_DIR}")
  endif()
endmacro()

function(hipr_generate_remoting)
  cmake_parse_arguments(ARG "" "SIDE;OUT_DIR;ANNOTATIONS" "DECLARATIONS" ${ARGN})
  _hipr_remoting_inputs()
  set(generator "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/gen_remoting.py")
  if(ARG_SIDE STREQUAL "client")
    set(outputs "${out_dir}/api_calls.h" "${out_dir}/api_entries.cc")
    set(HIPR_REMOTING_SOURCES "${out_dir}/api_entries.cc" PARENT_SCOPE)
  elseif(ARG_SIDE STREQUAL "worker")
    set(outputs "${out_dir}/api_calls.h" "${out_dir}/api_device.h" "${out_dir}/api_dispatch.cc"
                "${out_dir}/hip_api.cc")
    set(HIPR_REMOTING_SOURCES "${out_dir}/api_dispatch.cc" PARENT_SCOPE)
    set(HIPR_REMOTING_HIP_SRC "${out_dir}/hip_api.cc" PARENT_SCOPE)
  else()
    message(FATAL_ERROR "hipr_generate_remoting: SIDE must be client or worker")
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND "${HIPR_GEN_PYTHON}" "${generator}" --annotations "${annotations}" ${declaration_args}
            --side ${ARG_SIDE} --out-dir "${out_dir}" ${include_args}
    DEPENDS "${generator}" "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/gen_exports.py" "${annotations}"
            ${ARG_DECLARATIONS}
    COMMENT "Generating the ${ARG_SIDE} side of the generated HIP remoting"
    VERBATIM)
  set(HIPR_REMOTING_DIR "${out_dir}" PARENT_SCOPE)
endfunction()

# hipr_generate_hip_api(OUT_DIR <dir> ANNOTATIONS <file> RUNTIME_INCLUDE_DIR <dir>
#                       [DECLARATIONS <file>...] OUTPUT_VARIABLE <var>)
#
# The hip device's hip_api.cc for a module built against the HIP headers in
# RUNTIME_INCLUDE_DIR (a newer ROCm's, HIPR_ROCM_PREFIXES): the interface it
# implements is hipr_generate_remoting's (same ANNOTATIONS and DECLARATIONS);
# the functions those headers declare are called, the rest answer
# NotInThisRuntime. Sets <var> to the generated file.
function(hipr_generate_hip_api)
  cmake_parse_arguments(ARG "" "OUT_DIR;ANNOTATIONS;RUNTIME_INCLUDE_DIR;OUTPUT_VARIABLE" "DECLARATIONS" ${ARGN})
  _hipr_remoting_inputs()
  set(generator "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/gen_remoting.py")
  add_custom_command(
    OUTPUT "${out_dir}/hip_api.cc"
    COMMAND "${HIPR_GEN_PYTHON}" "${generator}" --annotations "${annotations}" ${declaration_args}
            --side worker --out-dir "${out_dir}" ${include_args}
            --runtime-include-dir "${ARG_RUNTIME_INCLUDE_DIR}"
    DEPENDS "${generator}" "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/gen_exports.py" "${annotations}"
            ${ARG_DECLARATIONS} "${ARG_RUNTIME_INCLUDE_DIR}/hip/hip_runtime_api.h"
    COMMENT "Generating the hip device's remoting for ${ARG_RUNTIME_INCLUDE_DIR}"
    VERBATIM)
  set(${ARG_OUTPUT_VARIABLE} "${out_dir}/hip_api.cc" PARENT_SCOPE)
endfunction()
