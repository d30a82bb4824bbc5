# Precompiled headers (ACCELBENCH_PCH, on by default): the standard library, fmt and nlohmann/json
# (cmake/pch/accelbench_pch.hpp; Catch2 too for the test programs) are parsed once per build
# instead of once per translation unit: about a tenth of the CPU time of the units that use it
# (measured on our store, core and test units; loading the PCH costs ~1 s, so a small unit gains
# nothing).
#
# A PCH is only valid with the compile options it was built with (clang refuses it otherwise, GCC
# silently parses the headers instead), so two donors are built with the options of the targets
# that reuse them: accelbench_pch_lib (our static libraries: -fPIC) and accelbench_pch_test (the
# Catch2 programs: -fPIE and the test definitions). A target with options of its own (-O3, -m...,
# -ffp-contract, per-source options), CUDA sources, or Catch2's main keeps compiling without one.
#
# accelbench_target_defaults records every target of ours; accelbench_apply_pch(), called once
# after all of them are defined, attaches the PCH to those it suits.

# Whether tgt compiles with exactly the donors' options.
function(accelbench_pch_suits tgt out)
  set(ok TRUE)
  get_target_property(type ${tgt} TYPE)
  get_target_property(is_test ${tgt} ACCELBENCH_TEST_TARGET)
  if(NOT type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY)$" AND NOT is_test)
    set(ok FALSE)
  endif()
  # -fopenmp changes the language options a PCH records (clang refuses the PCH): OpenMP is linked
  # privately, by the targets whose sources use it, and they compile without one.
  get_target_property(libs ${tgt} LINK_LIBRARIES)
  if(libs MATCHES "OpenMP::")
    set(ok FALSE)
  endif()
  get_target_property(opts ${tgt} COMPILE_OPTIONS)
  if(opts MATCHES "-O[0-9s]|-ffp-contract|-m[a-z]|fsanitize=fuzzer[;>]|fsanitize=fuzzer$")
    set(ok FALSE)
  endif()
  get_target_property(srcs ${tgt} SOURCES)
  foreach(s IN LISTS srcs)
    get_source_file_property(sopts ${s} COMPILE_OPTIONS)
    if(s MATCHES "\\.cu$" OR sopts)
      set(ok FALSE)
    endif()
  endforeach()
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

# The donor of one kind: builds HEADER with the options of the targets that reuse it.
function(accelbench_pch_donor name kind header)
  set(dir ${ACCELBENCH_SOURCE_DIR}/cmake/pch)
  if(kind STREQUAL "test")
    # The definitions every test program has (accelbench_add_test): GCC uses a PCH only where
    # each macro defined when it was built is defined the same way.
    add_executable(${name} EXCLUDE_FROM_ALL ${dir}/pch_donor_main.cpp)
    target_compile_definitions(${name} PRIVATE
      ACCELBENCH_SOURCE_DIR="${ACCELBENCH_SOURCE_DIR}" ACCELBENCH_BINARY_DIR="${CMAKE_BINARY_DIR}")
    target_link_libraries(${name} PRIVATE Catch2::Catch2)
  else()
    add_library(${name} OBJECT EXCLUDE_FROM_ALL ${dir}/pch_donor.cpp)
  endif()
  accelbench_target_defaults(${name})
  target_link_libraries(${name} PRIVATE fmt::fmt nlohmann_json::nlohmann_json)
  target_precompile_headers(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${header}>)
endfunction()

function(accelbench_apply_pch)
  if(NOT ACCELBENCH_PCH)
    return()
  endif()
  # GCC only: it refuses an unsuitable PCH loudly here (-Winvalid-pch under ACCELBENCH_WERROR,
  # which CI's Release build sets), so a target it does not suit cannot slip through. The
  # sanitizer build (clang) parses the headers as before.
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    message(STATUS "accelbench: no precompiled headers with ${CMAKE_CXX_COMPILER_ID} (GCC only)")
    return()
  endif()
  get_property(targets GLOBAL PROPERTY ACCELBENCH_TARGETS)
  set(dir ${ACCELBENCH_SOURCE_DIR}/cmake/pch)
  accelbench_pch_donor(accelbench_pch_lib lib ${dir}/accelbench_pch.hpp)
  if(ACCELBENCH_BUILD_TESTS)
    accelbench_pch_donor(accelbench_pch_test test ${dir}/accelbench_test_pch.hpp)
  endif()
  set(used 0)
  foreach(tgt IN LISTS targets)
    accelbench_pch_suits(${tgt} ok)
    if(NOT ok OR tgt STREQUAL "accelbench_test_main")
      continue()
    endif()
    get_target_property(is_test ${tgt} ACCELBENCH_TEST_TARGET)
    if(is_test)
      target_precompile_headers(${tgt} REUSE_FROM accelbench_pch_test)
    else()
      target_precompile_headers(${tgt} REUSE_FROM accelbench_pch_lib)
    endif()
    math(EXPR used "${used} + 1")
  endforeach()
  message(STATUS "accelbench: precompiled headers for ${used} targets (ACCELBENCH_PCH=OFF to stop)")
endfunction()
