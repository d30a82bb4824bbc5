// The one translation unit that defines Catch2's main (Catch2 2.x).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
