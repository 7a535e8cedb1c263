#include "catch.hpp"
#include "roofline/core/text.hpp"

using namespace roofline;

TEST_CASE("edit distance counts single-character edits") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("h100", "h100") == 0);
  CHECK(edit_distance("h100", "h10") == 1);        // one deletion
  CHECK(edit_distance("kitten", "sitting") == 3);  // k->s, e->i, +g
  CHECK(edit_distance("", "abc") == 3);
}

TEST_CASE("closest match suggests likely typos only") {
  const std::vector<std::string> names{"h100-sxm", "h200-sxm", "mi300x"};
  CHECK(closest_match("h200-sx", names) == std::optional<std::string>("h200-sxm"));  // prefix
  CHECK(closest_match("mi30x", names) == std::optional<std::string>("mi300x"));      // distance 1
  CHECK_FALSE(closest_match("tpu-v5", names).has_value());                           // too far
}

TEST_CASE("split trims blanks and keeps empty pieces") {
  CHECK(split("a, b ,c", ',') == std::vector<std::string>{"a", "b", "c"});
  CHECK(split("a,,b", ',') == std::vector<std::string>{"a", "", "b"});
  CHECK(split("", ',') == std::vector<std::string>{""});
}

TEST_CASE("to_lower lowers ASCII") {
  CHECK(to_lower("H100-SXM") == "h100-sxm");
}
