# accelbench_target_defaults(target): C++20, warnings, the repository root on the include path.
function(accelbench_target_defaults tgt)
  target_compile_features(${tgt} PUBLIC cxx_std_20)
  set_target_properties(${tgt} PROPERTIES CXX_EXTENSIONS OFF POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${tgt} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
  target_include_directories(${tgt} PUBLIC $<BUILD_INTERFACE:${ACCELBENCH_SOURCE_DIR}>)
endfunction()

# accelbench_add_test(name SOURCES ... LIBS ...): one Catch2 executable per module, discovered by CTest.
function(accelbench_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  accelbench_target_defaults(${name})
  target_link_libraries(${name} PRIVATE accelbench_test_main ${T_LIBS})
  target_compile_definitions(${name} PRIVATE
    ACCELBENCH_SOURCE_DIR="${ACCELBENCH_SOURCE_DIR}"
    ACCELBENCH_BINARY_DIR="${CMAKE_BINARY_DIR}")
  # A test case that cannot run here exits 77 (tests/skip.hpp) and is reported as skipped.
  catch_discover_tests(${name} TEST_PREFIX "${name}:" PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
endfunction()
