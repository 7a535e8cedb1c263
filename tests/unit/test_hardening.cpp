// Hardening II (issue 22): the findings that a library call shows; the CLI ones are in
// tests/cli/test_hardening_cli.cpp. Each TEST_CASE is named after its finding and has a row in
// docs/bad-input.md.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "catch.hpp"
#include "files.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"
#include "roofline/core/json_schema.hpp"
#include "roofline/core/text.hpp"
#include "roofline/report/output_file.hpp"

using Catch::Matchers::Contains;
using namespace roofline;
using nlohmann::json;

namespace {

std::vector<std::string> violations(const json& schema, const json& document) {
  std::vector<std::string> out;
  for (const auto& v : SchemaValidator(schema).validate(document)) out.push_back(v.pointer + ": " + v.message);
  return out;
}

}  // namespace

TEST_CASE("hardening II #1: a 30,000-character id does not crash the schema matcher") {
  // The hardware schema's id pattern; std::regex recursed once per character it consumed and
  // overflowed the stack at about 30,000.
  const json schema = {{"type", "string"}, {"pattern", "^[a-z0-9][a-z0-9.-]*$"}};
  CHECK(violations(schema, std::string(30000, 'a')) ==
        std::vector<std::string>{
            ": is 30000 bytes long, more than the 1024 a string checked against a pattern may have"});
  CHECK(violations(schema, std::string(1024, 'a')).empty());
  CHECK(violations(schema, std::string(1025, 'a')).size() == 1);
}

TEST_CASE("hardening II: minLength and maxLength count characters, not bytes") {
  const json schema = {{"type", "string"}, {"minLength", 2}, {"maxLength", 3}};
  // "é" is 2 bytes of UTF-8 and 1 character; "日本語" is 9 bytes and 3 characters.
  CHECK(violations(schema, "\xc3\xa9") == std::vector<std::string>{": must have at least 2 characters"});
  CHECK(violations(schema, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e").empty());
  CHECK(violations(schema, "abcd") == std::vector<std::string>{": must have at most 3 characters"});
}

TEST_CASE("hardening II: a keyword in a form the validator does not implement is refused when it is built") {
  CHECK_THROWS_WITH(SchemaValidator(json{{"type", {"string", "null"}}}), Contains("must be one type name"));
  CHECK_THROWS_WITH(SchemaValidator(json{{"items", {{{"type", "string"}}}}}),
                    Contains("must be a schema (an object or a boolean)"));
  CHECK_THROWS_WITH(SchemaValidator(json{{"pattern", "("}}), Contains("is not a regular expression"));
}

TEST_CASE("hardening II #3: a FIFO where a file is read is refused at once") {
  const auto dir = scratch("fifo");
  const auto fifo = dir / "gpu.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Opening a FIFO for reading waits for a writer; read_input_file must not.
  CHECK_THROWS_WITH(read_input_file(fifo), fifo.string() + ": is a FIFO, not a regular file");
  CHECK_THROWS_WITH(read_input_file("/dev/zero"), "/dev/zero: is a character device, not a regular file");
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardening II #4: a streamed output stops at the first failed write") {
  // /dev/full fails every write with ENOSPC. A writer of 10^9 rows would take minutes; the first
  // failed buffer (64 KiB, about 9,000 rows here) must end it.
  long rows = 0;
  CHECK_THROWS_WITH(write_file_atomically("/dev/full",
                                          [&](std::ostream& out) {
                                            for (; rows < 1000000000; ++rows) out << rows << ",1.5\n";
                                          }),
                    "-o /dev/full: write failed (No space left on device)");
  // 64 KiB of rows of at most 16 bytes: fewer than 65,536 / 6 = 10,923 rows before the buffer
  // first drains; far below 10^9.
  CHECK(rows < 20000);
}

TEST_CASE("hardening II #7: an output never replaces an input of the same run") {
  const auto dir = scratch("input");
  const auto input = dir / "run.json";
  std::ofstream(input) << "{\"a\": 1}";
  (void)read_input_file(input);
  CHECK_THROWS_WITH(write_file_atomically(input, "{}"), Contains(": is an input of this run"));
  // Through a link to it, too.
  std::filesystem::create_symlink("run.json", dir / "link.json");
  CHECK_THROWS_WITH(write_file_atomically(dir / "link.json", "{}"), Contains(": is an input of this run"));
  CHECK(slurp(input) == "{\"a\": 1}");
  std::filesystem::remove_all(dir);
  forget_inputs();  // run.json is gone, and a later test's file may get its inode
}

TEST_CASE("hardening II #8: an overwritten file keeps its mode and a dangling link is written through") {
  const auto dir = scratch("mode");
  const auto file = dir / "private.csv";
  std::ofstream(file) << "old\n";
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  write_file_atomically(file, "new\n");
  CHECK(slurp(file) == "new\n");
  CHECK((std::filesystem::status(file).permissions() & std::filesystem::perms::all) ==
        (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));

  std::filesystem::create_symlink("target.csv", dir / "link.csv");  // target.csv does not exist yet
  write_file_atomically(dir / "link.csv", "through\n");
  CHECK(std::filesystem::is_symlink(dir / "link.csv"));
  CHECK(slurp(dir / "target.csv") == "through\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardening II #17: a key given twice in a JSON object is refused, with the object's pointer") {
  CHECK_THROWS_WITH(parse_json_document(R"({"memory": {"bandwidth_tbps": 1, "bandwidth_tbps": 2}})", "f.json"),
                    "f.json: /memory: key 'bandwidth_tbps' is given twice (the last one would win without a word)");
  CHECK_THROWS_WITH(parse_json_document(R"({"a": [{"x": 1}, {"y": 2, "y": 3}]})", "f.json"),
                    Contains("f.json: /a/1: key 'y' is given twice"));
  CHECK_THROWS_WITH(parse_json_document(R"({"k": 1, "k": 1})", "f.json"), Contains("f.json: /: key 'k'"));
  // The same key in sibling objects is fine.
  CHECK(parse_json_document(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 3}, {"x": 4}]})", "f.json").size() == 3);
}

TEST_CASE("hardening II #18: numbers are read as decimals, never hexadecimal") {
  // std::stod("0x10") is 16.
  CHECK_FALSE(parse_decimal("0x10"));
  CHECK_FALSE(parse_decimal(" 1"));
  CHECK_FALSE(parse_decimal("1.5x"));
  CHECK_FALSE(parse_decimal(""));
  CHECK(parse_decimal("+2.5e3") == 2500.0);
  CHECK(parse_decimal("-0.125") == -0.125);
}
