# hipr_generate_exports(OUT_DIR <dir> SYMBOLS <file> HANDWRITTEN <file>)
#
# Adds a build-time custom command that runs shim_gen/gen_exports.py (with
# Debian's /usr/bin/python3, which has python3-clang-15) to produce
#   ${OUT_DIR}/exports.map             GNU ld version script of the HIP ABI
#   ${OUT_DIR}/unsupported_exports.cc  the generated "unsupported" entry points
# and sets HIPR_EXPORTS_MAP and HIPR_UNSUPPORTED_SRC in the caller's scope.
# Relative SYMBOLS/HANDWRITTEN paths are taken from the current source dir,
# a relative OUT_DIR from the current binary dir.
#
# Typical use (client_stub/CMakeLists.txt):
#   hipr_generate_exports(OUT_DIR gen
#     SYMBOLS abi/libamdhip64.so.5.symbols HANDWRITTEN abi/handwritten.txt)
#   add_library(hip_client_stub SHARED ... ${HIPR_UNSUPPORTED_SRC})
#   target_link_options(hip_client_stub PRIVATE
#     -Wl,--version-script=${HIPR_EXPORTS_MAP} -Wl,--exclude-libs,ALL
#     -Wl,-soname,libamdhip64.so.5)
#   set_property(TARGET hip_client_stub APPEND PROPERTY LINK_DEPENDS ${HIPR_EXPORTS_MAP})
# The .cc source is what makes the command run before the link.

set(HIPR_GEN_PYTHON /usr/bin/python3 CACHE FILEPATH
    "Python with python3-clang (Debian's), used to run shim_gen generators")

function(hipr_generate_exports)
  cmake_parse_arguments(ARG "" "OUT_DIR;SYMBOLS;HANDWRITTEN" "" ${ARGN})
  foreach(required OUT_DIR SYMBOLS HANDWRITTEN)
    if(NOT ARG_${required})
      message(FATAL_ERROR "hipr_generate_exports: ${required} is required")
    endif()
  endforeach()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "hipr_generate_exports: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()

  get_filename_component(symbols "${ARG_SYMBOLS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_filename_component(handwritten "${ARG_HANDWRITTEN}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_filename_component(out_dir "${ARG_OUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  set(generator "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/gen_exports.py")
  set(map "${out_dir}/exports.map")
  set(src "${out_dir}/unsupported_exports.cc")

  # The HIP headers the generator parses; the root CMakeLists finds them.
  set(include_args)
  if(HIP_INCLUDE_DIR)
    set(include_args --include-dir "${HIP_INCLUDE_DIR}")
  endif()

  add_custom_command(
    OUTPUT "${map}" "${src}"
    COMMAND "${HIPR_GEN_PYTHON}" "${generator}"
            --symbols "${symbols}" --handwritten "${handwritten}"
            --out-dir "${out_dir}" ${include_args}
    DEPENDS "${generator}" "${symbols}" "${handwritten}"
    COMMENT "Generating HIP exports (exports.map, unsupported_exports.cc)"
    VERBATIM)

  set(HIPR_EXPORTS_MAP "${map}" PARENT_SCOPE)
  set(HIPR_UNSUPPORTED_SRC "${src}" PARENT_SCOPE)
endfunction()
