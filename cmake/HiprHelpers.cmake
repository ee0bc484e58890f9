# hipr_add_test(<name> SOURCES <src...> LIBS <lib...> [LABELS <label...>])
# One GoogleTest executable registered with ctest (leveldb-style foo_test.cc
# beside foo.cc), labelled `unit` besides LABELS (deploy/hipr-dev sanitize
# runs that label), and made a dependency of the `unit_tests` target, which
# builds every test executable and nothing else.
function(hipr_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main Threads::Threads)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  add_test(NAME ${name} COMMAND ${name})
  set(labels unit ${ARG_LABELS})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300 LABELS "${labels}")
  hipr_sanitizer_environment(${name})
  hipr_unit_tests_need(${name})
endfunction()

# Under HIPR_SANITIZE: the leaks that are by design suppressed
# (tests/lsan_suppressions.txt), and UBSan's findings with their stacks.
function(hipr_sanitizer_environment test)
  if(HIPR_SANITIZE)
    set_tests_properties(${test} PROPERTIES ENVIRONMENT
      "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/lsan_suppressions.txt:print_suppressions=0;UBSAN_OPTIONS=print_stacktrace=1")
  endif()
endfunction()

# hipr_add_fuzz_target(<name> SOURCES <src...> LIBS <lib...>
#                      SEED_GENERATOR <target> [SEED_ARGS <arg...>])
# A fuzz target: SOURCES define LLVMFuzzerTestOneInput. Under g++ (the normal
# build) it is linked with the replay driver
# (protocol/code_object/code_object_fuzz_main.cc), and ctest runs
# `<name>_seeds` (SEED_GENERATOR OUT_DIR SEED_ARGS..., writing the seed
# corpus) then `<name>_corpus` (every seed and its prefixes through the
# target). With HIPR_LIBFUZZER it is linked with libFuzzer instead, and
# `<name>_corpus` runs each seed once (-runs=0); tests/fuzz/run_fuzz.sh fuzzes
# it. Both tests are labelled `fuzz`.
function(hipr_add_fuzz_target name)
  cmake_parse_arguments(ARG "" "SEED_GENERATOR" "SOURCES;LIBS;SEED_ARGS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} Threads::Threads)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  if(HIPR_LIBFUZZER)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    set(replay_flags -runs=0)
  else()
    target_sources(${name} PRIVATE ${PROJECT_SOURCE_DIR}/protocol/code_object/code_object_fuzz_main.cc)
    set(replay_flags)
  endif()
  set(seeds ${CMAKE_CURRENT_BINARY_DIR}/${name}_seeds)
  add_test(NAME ${name}_seeds COMMAND ${ARG_SEED_GENERATOR} ${seeds} ${ARG_SEED_ARGS})
  set_tests_properties(${name}_seeds PROPERTIES FIXTURES_SETUP ${name}_seeds LABELS fuzz)
  add_test(NAME ${name}_corpus COMMAND ${name} ${replay_flags} ${seeds})
  set_tests_properties(${name}_corpus PROPERTIES FIXTURES_REQUIRED ${name}_seeds TIMEOUT 300 LABELS fuzz)
  hipr_sanitizer_environment(${name}_corpus)
  hipr_unit_tests_need(${name} ${ARG_SEED_GENERATOR})
endfunction()

# The `unit_tests` target: every executable hipr_add_test and
# hipr_add_fuzz_target register, so a build can make just those
# (cmake --build <dir> --target unit_tests).
function(hipr_unit_tests_need)
  if(NOT TARGET unit_tests)
    add_custom_target(unit_tests)
  endif()
  add_dependencies(unit_tests ${ARGN})
endfunction()

# The HIP major of the headers in `include_dir` (its hip/hip_version.h), or
# "" when it has none.
function(hipr_hip_headers_major include_dir out)
  set(version_h ${include_dir}/hip/hip_version.h)
  set(major "")
  if(EXISTS ${version_h})
    file(STRINGS ${version_h} major_line REGEX "^#define HIP_VERSION_MAJOR ")
    string(REGEX REPLACE "^#define HIP_VERSION_MAJOR +([0-9]+).*" "\\1" major "${major_line}")
  endif()
  set(${out} ${major} PARENT_SCOPE)
endfunction()

# The HIP major of a ROCm prefix (HIPR_ROCM_PREFIXES), read from its
# include/hip/hip_version.h; 6 or above, or a configure error.
function(hipr_rocm_prefix_major prefix out)
  if(NOT EXISTS ${prefix}/include/hip/hip_version.h)
    message(FATAL_ERROR "HIPR_ROCM_PREFIXES: ${prefix} has no include/hip/hip_version.h")
  endif()
  hipr_hip_headers_major(${prefix}/include major)
  if(NOT major MATCHES "^[0-9]+$" OR major LESS 6)
    message(FATAL_ERROR "HIPR_ROCM_PREFIXES: ${prefix} is HIP '${major}'; 5.x comes from the system (hipr_device_hip)")
  endif()
  set(${out} ${major} PARENT_SCOPE)
endfunction()
