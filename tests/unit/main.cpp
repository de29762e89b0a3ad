// The Catch2 v2 main() of the unit test executable; the tests are in the other files.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
