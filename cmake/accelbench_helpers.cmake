# accelbench_target_defaults(target): C++20, warnings, the repository root on the include path.
function(accelbench_target_defaults tgt)
  target_compile_features(${tgt} PUBLIC cxx_std_20)
  set_target_properties(${tgt} PROPERTIES CXX_EXTENSIONS OFF POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${tgt} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
  if(ACCELBENCH_WERROR)
    # Two GCC 12 false positives inside its own headers stay warnings: -Wrestrict on
    # std::string's inlined memcpy (GCC bug 105329) and -Wuninitialized on the AVX-512
    # _mm512_extractf64x4_pd intrinsic (GCC bug 105593).
    target_compile_options(${tgt} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>
      $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-error=restrict -Wno-error=uninitialized>)
  endif()
  target_include_directories(${tgt} PUBLIC $<BUILD_INTERFACE:${ACCELBENCH_SOURCE_DIR}>)
  accelbench_instrument(${tgt})
endfunction()

# accelbench_instrument(target): the sanitizer and fuzzer instrumentation of one of our targets
# (never global flags: Debian's libraries stay as built, only our code is checked).
# ACCELBENCH_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer; any UB report aborts, so a
# finding fails its test instead of scrolling past. The link flag is PUBLIC so that whatever links
# one of our static libraries also gets the sanitizer runtimes.
# ACCELBENCH_FUZZ: libFuzzer's coverage instrumentation (fuzzer-no-link) on every library the fuzz
# targets call into; the fuzz executables add -fsanitize=fuzzer themselves (tests/fuzz).
function(accelbench_instrument tgt)
  if(ACCELBENCH_SANITIZE)
    target_compile_options(${tgt} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:${ACCELBENCH_SANITIZE_FLAGS}>)
    target_link_options(${tgt} PUBLIC $<$<LINK_LANGUAGE:C,CXX>:-fsanitize=address,undefined>)
  endif()
  if(ACCELBENCH_FUZZ)
    target_compile_options(${tgt} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>)
  endif()
endfunction()

# accelbench_add_test(name SOURCES ... LIBS ... [TIMEOUT s] [PREFIX p] [GPU]): one Catch2 executable
# per module, discovered by CTest as "<name>:<test case>" (or "<p>:<test case>": PREFIX keeps the
# CTest names of test cases that moved to an executable of their own); each test case may run
# TIMEOUT seconds (300 by default). GPU: the program's test cases may run on the GPU; they hold
# CTest's resource lock "gpu", so that `ctest -j N` never runs two of them on one device at once
# (each would time the other's kernels and share its memory).
function(accelbench_add_test name)
  cmake_parse_arguments(T "GPU" "TIMEOUT;PREFIX" "SOURCES;LIBS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  if(NOT T_PREFIX)
    set(T_PREFIX ${name})
  endif()
  add_executable(${name} ${T_SOURCES})
  accelbench_target_defaults(${name})
  target_link_libraries(${name} PRIVATE accelbench_test_main ${T_LIBS})
  target_compile_definitions(${name} PRIVATE
    ACCELBENCH_SOURCE_DIR="${ACCELBENCH_SOURCE_DIR}"
    ACCELBENCH_BINARY_DIR="${CMAKE_BINARY_DIR}")
  # A sanitizer build reads the leak suppressions of Debian's libraries (tests/sanitizers).
  set(env "")
  if(ACCELBENCH_SANITIZE)
    set(env ENVIRONMENT "LSAN_OPTIONS=suppressions=${ACCELBENCH_SOURCE_DIR}/tests/sanitizers/lsan.supp")
  endif()
  set(lock "")
  if(T_GPU)
    set(lock RESOURCE_LOCK gpu)
  endif()
  # A test case that cannot run here exits 77 (tests/support/skip.hpp) and is reported as skipped. A
  # name that CTest cannot pass back to Catch (it splits names at ';') matches no test case: -w
  # NoTests makes that a failure instead of an empty pass.
  catch_discover_tests(${name} TEST_PREFIX "${T_PREFIX}:" EXTRA_ARGS -w NoTests PROPERTIES TIMEOUT ${T_TIMEOUT} SKIP_RETURN_CODE 77 ${env} ${lock})
  accelbench_label_tagged_tests(${name} ${T_PREFIX})
endfunction()

# The Catch2 tags that become CTest labels (cmake/catch_tag_labels.cmake): [timing] marks a test
# case whose outcome involves wall-clock time, waits, signals or concurrency (docs/architecture.md,
# "Tests"), so that `ctest -L timing` reruns that group, e.g. with both cores kept busy.
set(ACCELBENCH_LABEL_TAGS timing)

# accelbench_label_tagged_tests(target prefix): after each build of the test program, lists its
# test cases of each tag in ACCELBENCH_LABEL_TAGS and labels their CTest tests; the script is
# included after catch_discover_tests' (TEST_INCLUDE_FILES are read in order).
function(accelbench_label_tagged_tests tgt prefix)
  set(labels_file "${CMAKE_CURRENT_BINARY_DIR}/${tgt}_labels.cmake")
  add_custom_command(TARGET ${tgt} POST_BUILD
    BYPRODUCTS "${labels_file}"
    COMMAND "${CMAKE_COMMAND}" -D "TEST_EXECUTABLE=$<TARGET_FILE:${tgt}>" -D "PREFIX=${prefix}"
            "-DTAGS=${ACCELBENCH_LABEL_TAGS}" -D "CTEST_FILE=${labels_file}"
            -P "${ACCELBENCH_SOURCE_DIR}/cmake/catch_tag_labels.cmake"
    VERBATIM)
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${tgt}_labels_include.cmake")
  file(WRITE "${include_file}" "if(EXISTS \"${labels_file}\")\n  include(\"${labels_file}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()

# accelbench_unity(target): compile the target's sources in batches of 8 (CMake's unity build)
# when ACCELBENCH_UNITY_BUILD is on. Only for targets without hot loops: a batch may inline across
# its sources, and a benchmark's timed code must not change with the batch it lands in. Sources
# with their own compile options are never batched (CMake leaves them out).
function(accelbench_unity tgt)
  if(ACCELBENCH_UNITY_BUILD)
    set_target_properties(${tgt} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endfunction()
