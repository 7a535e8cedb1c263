// Sweep expressions: lists, geometric and arithmetic ranges, and their errors.
#include "catch.hpp"
#include "roofline/core/error.hpp"
#include "roofline/model/sweep.hpp"

using namespace roofline;
using Catch::Matchers::Contains;
using Ints = std::vector<std::int64_t>;

TEST_CASE("integer sweeps: values, lists, ranges") {
  CHECK(parse_int_sweep("--m", "4096") == Ints{4096});
  CHECK(parse_int_sweep("--m", "1024,2048,4096") == Ints{1024, 2048, 4096});
  CHECK(parse_int_sweep("--seq", "1024:32768:x2") == Ints{1024, 2048, 4096, 8192, 16384, 32768});
  CHECK(parse_int_sweep("--seq", "1000:5000:*3") == Ints{1000, 3000});
  CHECK(parse_int_sweep("--k", "1024:4096:+1024") == Ints{1024, 2048, 3072, 4096});
  CHECK(parse_int_sweep("--k", "1:10:4") == Ints{1, 5, 9});
  CHECK(parse_int_sweep("--k", "1:4") == Ints{1, 2, 3, 4});
  CHECK(parse_int_sweep("--k", "7:7") == Ints{7});
  CHECK(parse_int_sweep("--k", "1,2,4:16:x2,3") == Ints{1, 2, 4, 8, 16, 3});
  CHECK(parse_int_sweep("--elements", "1e6") == Ints{1000000});
  CHECK(parse_int_sweep("--inputs", "0,1", 0) == Ints{0, 1});
  CHECK(parse_int_sweep("--m", "9223372036854775807") == Ints{INT64_MAX});
  // A geometric range stops before it would pass stop (or overflow).
  CHECK(parse_int_sweep("--m", "4611686018427387904:9223372036854775807:x2").size() == 1);
}

TEST_CASE("integer sweep errors name the flag") {
  CHECK_THROWS_WITH(parse_int_sweep("--m", "0"), Contains("--m: '0' must be at least 1"));
  CHECK_THROWS_WITH(parse_int_sweep("--m", "-3"), Contains("at least 1"));
  CHECK_THROWS_WITH(parse_int_sweep("--m", "abc"), Contains("not an integer"));
  CHECK_THROWS_WITH(parse_int_sweep("--m", "1.5"), Contains("not an integer"));
  CHECK_THROWS_WITH(parse_int_sweep("--m", "99999999999999999999"), Contains("too large"));
  CHECK_THROWS_WITH(parse_int_sweep("--m", "1e30"), Contains("too large"));
  CHECK_THROWS_WITH(parse_int_sweep("--m", ""), Contains("empty"));
  CHECK_THROWS_WITH(parse_int_sweep("--m", "1,,2"), Contains("empty"));
  CHECK_THROWS_WITH(parse_int_sweep("--m", "8:4"), Contains("empty (start > stop)"));
  CHECK_THROWS_WITH(parse_int_sweep("--m", "1:8:x1"), Contains("at least 2"));
  CHECK_THROWS_WITH(parse_int_sweep("--m", "1:8:x1.5"), Contains("not an integer"));
  CHECK_THROWS_WITH(parse_int_sweep("--m", "1:8:+0"), Contains("at least 1"));
  CHECK_THROWS_WITH(parse_int_sweep("--m", "1:8:x"), Contains("empty step"));
  CHECK_THROWS_WITH(parse_int_sweep("--m", "1:2:3:4"), Contains("not a range"));
  CHECK_THROWS_WITH(parse_int_sweep("--m", "1:1e12"), Contains("more than 1000000 values"));
  CHECK_THROWS_WITH(parse_int_sweep("--inputs", "0:4:x2", 0), Contains("must start at 1"));
}

TEST_CASE("real sweeps") {
  CHECK(parse_real_sweep("--flops-per-element", "9") == std::vector<double>{9});
  CHECK(parse_real_sweep("--f", "0.1:0.3:+0.1").size() == 3);
  CHECK(parse_real_sweep("--f", "0.5:2:x2") == std::vector<double>{0.5, 1, 2});
  CHECK(parse_real_sweep("--f", "0,1.5") == std::vector<double>{0, 1.5});
  CHECK_THROWS_WITH(parse_real_sweep("--f", "-1"), Contains("at least 0"));
  CHECK_THROWS_WITH(parse_real_sweep("--f", "inf"), Contains("not a finite number"));
  CHECK_THROWS_WITH(parse_real_sweep("--f", "1:2:x1"), Contains("factor above 1"));
  CHECK_THROWS_WITH(parse_real_sweep("--f", "0:2:x2"), Contains("start above 0"));
}

TEST_CASE("the cartesian product: point count and odometer order, last axis fastest") {
  const std::vector<std::size_t> sizes{2, 3};
  CHECK(sweep_point_count(sizes) == 6);
  SweepCursor at(sizes);
  std::vector<std::pair<std::size_t, std::size_t>> seen;
  do {
    seen.emplace_back(at[0], at[1]);
  } while (at.next());
  CHECK(seen == std::vector<std::pair<std::size_t, std::size_t>>{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}});
  const std::vector<std::size_t> huge{1'000'000, 1'000'000, 1'000'000, 1'000'000};
  CHECK_THROWS_WITH(sweep_point_count(huge), Contains("2^63"));
}
