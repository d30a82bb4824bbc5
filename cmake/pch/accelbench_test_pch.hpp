// The precompiled header of the Catch2 test programs (cmake/accelbench_pch.cmake): the libraries'
// one and Catch2's single header. No CATCH_CONFIG_* here: tests/support/catch_main.cpp, which
// defines CATCH_CONFIG_RUNNER before including Catch2, does not use this header.
#pragma once
#include "accelbench_pch.hpp"

#include <catch2/catch.hpp>
