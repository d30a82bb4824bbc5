# Run at build time (POST_BUILD of a Catch2 test program, from accelbench_add_test): writes
# CTEST_FILE, a CTest script that gives the CTest test "<PREFIX>:<test case>" of each test case
# tagged [<tag>] the CTest label <tag>, for every tag of TAGS. Catch2 2.13's catch_discover_tests
# turns test cases into CTest tests but not tags into labels; `ctest -L timing` reruns the group.
# -D TEST_EXECUTABLE=... -D PREFIX=... -D TAGS=a;b -D CTEST_FILE=...
set(tests "")
foreach(tag ${TAGS})
  execute_process(COMMAND "${TEST_EXECUTABLE}" "[${tag}]" --list-test-names-only
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  # Catch2 2.x exits with the number of test cases listed; anything else is a failed listing.
  if(NOT rc MATCHES "^[0-9]+$")
    message(FATAL_ERROR "listing the [${tag}] test cases of ${TEST_EXECUTABLE} failed: ${rc}")
  endif()
  string(REPLACE "\n" ";" names "${out}")
  foreach(name ${names})
    if(NOT name STREQUAL "")
      string(MD5 key "${name}")
      if(NOT DEFINED labels_${key})
        list(APPEND tests "${key}")
        set(name_${key} "${name}")
      endif()
      list(APPEND labels_${key} ${tag})
    endif()
  endforeach()
endforeach()
# set_tests_properties, as CatchAddTests writes them: names in bracket arguments (they may hold
# spaces, quotes and brackets of their own).
set(script "")
foreach(key ${tests})
  string(APPEND script
         "set_tests_properties([==[${PREFIX}:${name_${key}}]==] PROPERTIES LABELS [==[${labels_${key}}]==])\n")
endforeach()
file(WRITE "${CTEST_FILE}" "${script}")
