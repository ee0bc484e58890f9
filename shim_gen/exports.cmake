# hipr_generate_exports(OUT_DIR <dir> SYMBOLS <file>... [DECLARATIONS <file>...]
#                       HANDWRITTEN <file> [ANNOTATIONS <file>])
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
# The .cc source is what makes the command run before the link. Functions
# ANNOTATIONS lists (shim_gen/annotations.txt) get generated remoting
# (remoting.cmake) instead of an "unsupported" entry.

set(HIPR_GEN_PYTHON /usr/bin/python3 CACHE FILEPATH
    "Python with python3-clang (Debian's), used to run shim_gen generators")

function(hipr_generate_exports)
  cmake_parse_arguments(ARG "" "OUT_DIR;HANDWRITTEN;ANNOTATIONS" "SYMBOLS;DECLARATIONS" ${ARGN})
  foreach(required OUT_DIR SYMBOLS HANDWRITTEN)
    if(NOT ARG_${required})
      message(FATAL_ERROR "hipr_generate_exports: ${required} is required")
    endif()
  endforeach()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "hipr_generate_exports: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()

  set(symbols)
  set(symbol_args)
  foreach(file IN LISTS ARG_SYMBOLS)
    get_filename_component(abs "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND symbols "${abs}")
    list(APPEND symbol_args --symbols "${abs}")
  endforeach()
  set(declarations)
  set(declaration_args)
  foreach(file IN LISTS ARG_DECLARATIONS)
    get_filename_component(abs "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND declarations "${abs}")
    list(APPEND declaration_args --declarations "${abs}")
  endforeach()
  get_filename_component(handwritten "${ARG_HANDWRITTEN}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_filename_component(out_dir "${ARG_OUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  set(annotation_args)
  set(annotations)
  if(ARG_ANNOTATIONS)
    get_filename_component(annotations "${ARG_ANNOTATIONS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set(annotation_args --annotations "${annotations}")
  endif()
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
            ${symbol_args} ${declaration_args} --handwritten "${handwritten}" ${annotation_args}
            --out-dir "${out_dir}" ${include_args}
    DEPENDS "${generator}" ${symbols} ${declarations} "${handwritten}" ${annotations}
    COMMENT "Generating HIP exports (exports.map, unsupported_exports.cc)"
    VERBATIM)

  set(HIPR_EXPORTS_MAP "${map}" PARENT_SCOPE)
  set(HIPR_UNSUPPORTED_SRC "${src}" PARENT_SCOPE)
endfunction()

# hipr_link_only_library(MAJOR <n> SYMBOLS <file>)
#
# Builds ${CMAKE_BINARY_DIR}/lib/hipr-link/<n>/libamdhip64.so, a link-only
# library with SONAME libamdhip64.so.<n> and exactly the symbols and version
# nodes of <file> (shim_gen/gen_link_only.py), so test programs can be linked
# against the <n>.x ABI here: -L${HIPR_LINK_ONLY_DIR_<n>} -lamdhip64. Target:
# hipr_link_only_<n>; the directory is in HIPR_LINK_ONLY_DIR_<n> (cache).
function(hipr_link_only_library)
  cmake_parse_arguments(ARG "" "MAJOR;SYMBOLS" "" ${ARGN})
  get_filename_component(symbols "${ARG_SYMBOLS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(gen_dir "${CMAKE_CURRENT_BINARY_DIR}/link_only_${ARG_MAJOR}")
  set(generator "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/gen_link_only.py")
  add_custom_command(
    OUTPUT "${gen_dir}/link_only.c" "${gen_dir}/link_only.map"
    COMMAND "${HIPR_GEN_PYTHON}" "${generator}" --symbols "${symbols}" --out-dir "${gen_dir}"
    DEPENDS "${generator}" "${symbols}"
    COMMENT "Generating the link-only libamdhip64.so.${ARG_MAJOR}"
    VERBATIM)
  set(target hipr_link_only_${ARG_MAJOR})
  set(out_dir "${CMAKE_BINARY_DIR}/lib/hipr-link/${ARG_MAJOR}")
  add_library(${target} SHARED "${gen_dir}/link_only.c")
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME amdhip64
    NO_SONAME ON  # The real SONAME comes from the link option below.
    LIBRARY_OUTPUT_DIRECTORY "${out_dir}"
    LINK_DEPENDS "${gen_dir}/link_only.map")
  target_link_options(${target} PRIVATE
    "-Wl,--version-script=${gen_dir}/link_only.map" "-Wl,-soname,libamdhip64.so.${ARG_MAJOR}")
  set(HIPR_LINK_ONLY_DIR_${ARG_MAJOR} "${out_dir}" CACHE INTERNAL "")
endfunction()
