// Reading inputs (roofline/input_file.hpp) and writing outputs atomically (roofline/output_file.hpp).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "files.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"
#include "roofline/report/output_file.hpp"

using Catch::Matchers::Contains;
using namespace roofline;

TEST_CASE("read_input_file: contents, a missing file, a folder and the size cap") {
  const auto dir = scratch("read");
  std::ofstream(dir / "a.json") << "{\"x\": 1}";
  CHECK(read_input_file(dir / "a.json") == "{\"x\": 1}");
  CHECK_THROWS_WITH(read_input_file(dir / "b.json"), (dir / "b.json").string() + ": no such file");
  CHECK_THROWS_WITH(read_input_file(dir), dir.string() + ": is a directory, not a file");
  // 1 MiB + 1 byte against a 1 MiB cap (sparse: resize_file writes nothing).
  std::filesystem::resize_file(dir / "a.json", (std::uintmax_t{1} << 20) + 1);
  CHECK_THROWS_WITH(read_input_file(dir / "a.json", std::uintmax_t{1} << 20),
                    Contains("1048577 bytes, more than the 1 MiB an input file may have"));
  CHECK(read_input_file(dir / "a.json").size() == (std::size_t{1} << 20) + 1);
  std::filesystem::remove_all(dir);
  forget_inputs();  // a.json is gone, and a later test's file may get its inode
}

TEST_CASE("an output may replace a file read before forget_inputs, never one read since") {
  // What the Python module relies on: each call is a run of its own (python/module.cpp).
  const auto dir = scratch("forget");
  std::ofstream(dir / "a.json") << "{}";
  (void)read_input_file(dir / "a.json");
  const auto write = [&] { write_file_atomically(dir / "a.json", [](std::ostream& out) { out << "new"; }); };
  CHECK_THROWS_WITH(write(), Contains("is an input of this run"));
  forget_inputs();
  CHECK_NOTHROW(write());
  CHECK(slurp(dir / "a.json") == "new");
  std::filesystem::remove_all(dir);
}

TEST_CASE("check_json_depth counts brackets outside strings only") {
  CHECK_NOTHROW(check_json_depth(std::string(256, '[') + std::string(256, ']'), "f.json"));
  CHECK_THROWS_WITH(check_json_depth(std::string(257, '['), "f.json"), "f.json: JSON nested deeper than 256 levels");
  // Brackets in strings, escaped quotes included, do not count.
  const std::string in_string = "[\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"]";
  CHECK_NOTHROW(check_json_depth(in_string, "f.json"));
  // Closing brackets give the depth back.
  std::string siblings;
  for (int i = 0; i < 1000; ++i) siblings += "[[]]";
  CHECK_NOTHROW(check_json_depth(siblings, "f.json"));
}

TEST_CASE("write_file_atomically replaces the file whole, or leaves it and no temporary file") {
  const auto dir = scratch("write");
  const auto file = dir / "out.csv";
  write_file_atomically(file, "a,b\n1,2\n");
  CHECK(slurp(file) == "a,b\n1,2\n");
  CHECK(entries(dir) == std::vector<std::string>{"out.csv"});

  SECTION("a writer that fails half-way leaves the earlier file") {
    CHECK_THROWS_WITH(write_file_atomically(file,
                                            [](std::ostream& out) {
                                              out << "a,b\n";
                                              for (int i = 0; i < 100000; ++i) out << i << ',' << i << '\n';
                                              throw InputError("row 100001: bad value");
                                            }),
                      "row 100001: bad value");
    CHECK(slurp(file) == "a,b\n1,2\n");
    CHECK(entries(dir) == std::vector<std::string>{"out.csv"});
  }
  SECTION("a writer that fails before anything exists leaves nothing") {
    CHECK_THROWS_AS(write_file_atomically(dir / "new.csv", [](std::ostream&) { throw std::runtime_error("boom"); }),
                    std::runtime_error);
    CHECK(entries(dir) == std::vector<std::string>{"out.csv"});
  }
  SECTION("a streamed file larger than the buffer arrives whole") {
    write_file_atomically(dir / "big.csv", [](std::ostream& out) {
      for (int i = 0; i < 200000; ++i) out << i << '\n';
    });
    const std::string text = slurp(dir / "big.csv");
    CHECK(text.starts_with("0\n1\n"));
    CHECK(text.ends_with("199999\n"));
    CHECK(std::count(text.begin(), text.end(), '\n') == 200000);
  }
  SECTION("unwritable paths name the flag and the path") {
    CHECK_THROWS_WITH(write_file_atomically(dir / "no" / "x.json", "{}", "--json"),
                      "--json " + (dir / "no" / "x.json").string() + ": cannot be written (No such file or directory)");
    CHECK_THROWS_WITH(write_file_atomically(dir, "{}"), "-o " + dir.string() + ": is a directory");
    CHECK_THROWS_WITH(write_file_atomically("", "{}"), "-o: the file name is empty");
    CHECK(entries(dir) == std::vector<std::string>{"out.csv"});
  }
  SECTION("a device is written in place, never replaced") {
    write_file_atomically("/dev/null", "discarded\n");
    CHECK(std::filesystem::is_character_file("/dev/null"));
    // /dev/full fails every write with ENOSPC: a write error naming the path.
    CHECK_THROWS_WITH(write_file_atomically("/dev/full", "x", "--json"), Contains("--json /dev/full: write failed"));
    CHECK(std::filesystem::is_character_file("/dev/full"));
  }
  SECTION("a link is followed: its target is replaced, the link stays") {
    std::filesystem::create_symlink("out.csv", dir / "link.csv");
    write_file_atomically(dir / "link.csv", "new\n");
    CHECK(std::filesystem::is_symlink(dir / "link.csv"));
    CHECK(slurp(file) == "new\n");
    CHECK(entries(dir) == std::vector<std::string>{"link.csv", "out.csv"});
  }
  std::filesystem::remove_all(dir);
}
