#pragma once
// One include for Catch2 v2 (Debian 12) and v3.
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
using Catch::Approx;  // v2 declares Approx in the global namespace
#else
#include <catch2/catch.hpp>
#endif
