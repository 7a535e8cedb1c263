// End-to-end tests of the report formats and the shared command-line features (docs/reports.md):
// markdown, csv --table, llm sweeps, config files, --version, renamed flags, shell completion,
// the man page and the plot's label summary. The HTML page is tested in a browser
// (tests/browser/check_html_report.py).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catch.hpp"
#include "run_binary.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

const std::string llm_8b = "llm --model llama-3.1-8b --gpu h100 --weights bf16 --kv bf16 --context 4096 --batch 8";
const std::string source_dir = ROOFLINE_SOURCE_DIR;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n', start)) {
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("reports: markdown is every table as a pipe table, nvbench's style") {
  const json report = json_report(llm_8b);
  const CommandResult md = roofline(llm_8b + " --format markdown");
  REQUIRE(md.exit_code == 0);
  const std::vector<std::string> lines = lines_of(md.out);
  CHECK(lines.front() == "# roofline llm");
  // One heading per table (summary, memory, decode, prefill, tp_allreduce, levers), then notes
  // and hardware.
  CHECK(count_of(md.out, "\n## ") == 8);
  // The decode table: a header, a rule of dashes only, then one line per op of the JSON.
  const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.starts_with("|") && l.find(" op ") != std::string::npos;
  });
  REQUIRE(header != lines.end());
  const auto rule = header + 1;
  CHECK(rule->find_first_not_of("|-") == std::string::npos);
  std::size_t rows = 0;
  for (auto line = rule + 1; line != lines.end() && line->starts_with("|"); ++line) ++rows;
  // The first table with an "op" header is decode (prefill comes after it).
  CHECK(rows == report.at("results").at("decode").size());
  // Every line of a table has the rule's width: the columns are padded to one width.
  CHECK(header->size() == rule->size());
}

TEST_CASE("reports: csv --table chooses any table, an unknown one lists the names") {
  const json report = json_report(llm_8b);
  const CommandResult csv = roofline(llm_8b + " --format csv --table decode");
  REQUIRE(csv.exit_code == 0);
  const std::vector<std::string> lines = lines_of(csv.out);
  CHECK(lines.front().starts_with("group,count,name,model,shape,gflop,mbytes,intensity_flop_per_byte,bound,time_us"));
  CHECK(lines.size() == report.at("results").at("decode").size() + 1);
  const CommandResult prefill = roofline(llm_8b + " --format csv --table prefill");
  CHECK(lines_of(prefill.out).size() == report.at("results").at("prefill").size() + 1);
  // Without --table, csv is the first table (summary), as before.
  const CommandResult first = roofline(llm_8b + " --format csv");
  CHECK(lines_of(first.out).front().starts_with("key,"));

  expect_bad_input(roofline(llm_8b + " --format csv --table decodes"),
                   "--table decodes: the llm report has no such table; it has summary, memory, decode, prefill, "
                   "tp_allreduce, levers");
  expect_bad_input(roofline(llm_8b + " --format json --table decode"), "--table decode: chooses the table of");
  // The table format takes it too: one table only.
  const CommandResult table = roofline(llm_8b + " --table memory");
  CHECK(table.out.starts_with("Memory per GPU, by pipeline stage\n"));
}

TEST_CASE("reports: llm sweeps --context and --batch, one row per point") {
  const CommandResult csv = roofline(
      "llm --model llama-3.1-8b --gpu h100 --weights bf16 --kv bf16 --context 1024:4096:x2 --batch 1,8,max --format "
      "csv");
  INFO(csv.err);
  REQUIRE(csv.exit_code == 0);
  const std::vector<std::string> lines = lines_of(csv.out);
  // 1024, 2048, 4096 x 1, 8, max = 9 points, --context outer.
  REQUIRE(lines.size() == 10);
  CHECK(lines[0].starts_with("context,prompt,batch_flag,batch,max_requests,"));
  CHECK(lines[1].starts_with("1024,1024,1,1,"));
  CHECK(lines[2].starts_with("1024,1024,8,8,"));
  CHECK(lines[3].starts_with("1024,1024,max,"));
  CHECK(lines[9].starts_with("4096,4096,max,"));
  // A point of the sweep is the single run at that point.
  const json sweep = json_report(
      "llm --model llama-3.1-8b --gpu h100 --weights bf16 --kv bf16 --context 1024:4096:x2 --batch 1,8,max");
  CHECK(sweep.at("schema") == "roofline.llm-sweep.v1");
  const json one = json_report("llm --model llama-3.1-8b --gpu h100 --weights bf16 --kv bf16 --context 2048 --batch 8");
  const json& row = sweep.at("results").at("sweep").at(4);
  CHECK(row.at("context") == 2048);
  CHECK(row.at("batch") == 8);
  CHECK(row.at("tpot_ms").get<double>() == one.at("results").at("tpot_ms").get<double>());
  CHECK(row.at("ttft_ms").get<double>() == one.at("results").at("ttft_ms").get<double>());
  CHECK(row.at("max_requests") == one.at("results").at("max_requests"));
  expect_bad_input(roofline("llm --model llama-3.1-8b --gpu h100 --context 1024:0:x2"), "--context");
}

TEST_CASE("reports: --config runs the bundled examples, --print-config writes a file that reruns the same") {
  for (const char* example : {"plan", "serve"}) {
    const std::string file = source_dir + "/docs/examples/" + example + ".toml";
    const CommandResult run = roofline(std::string(example) + " --config " + file + " --format json");
    INFO(example << ": " << run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(json::parse(run.out).at("schema") == std::string("roofline.") + example + ".v1");
  }
  const std::string flags =
      "plan --model llama-3.1-8b --gpus h100,a100-80gb --rps 5 --prompt-tokens 1000 --output-tokens 200 --tpot-ms 50 "
      "--ttft-ms 2000 --price all=2";
  const CommandResult printed = roofline(flags + " --print-config");
  REQUIRE(printed.exit_code == 0);
  CHECK_THAT(printed.out, Contains("[plan]"));
  CHECK_THAT(printed.out, Contains("prompt-tokens=1000"));
  const auto dir = scratch("config");
  write_file(dir / "plan.toml", printed.out);
  const json from_file = json_report("plan --config " + (dir / "plan.toml").string());
  const json from_flags = json_report(flags);
  CHECK(from_file.at("inputs") == from_flags.at("inputs"));
  CHECK(from_file.at("results") == from_flags.at("results"));
  // A key that is no flag is bad input, not ignored.
  write_file(dir / "typo.toml", "[plan]\nmodle = \"llama-3.1-8b\"\n");
  expect_bad_input(roofline("plan --config " + (dir / "typo.toml").string()),
                   "roofline: --config: INI was not able to parse plan.modle (no such flag of the command");
}

TEST_CASE("reports: --version names the commit, the build and the data's fingerprint, as the JSON does") {
  const CommandResult version = roofline("--version");
  REQUIRE(version.exit_code == 0);
  const json build = json_report("ridge --gpu h100").at("tool_build");
  CHECK_THAT(version.out, Contains("commit:  " + build.at("commit").get<std::string>()));
  CHECK_THAT(version.out, Contains("CUDA " + build.at("cuda").get<std::string>()));
  CHECK_THAT(version.out, Contains("sha256 " + build.at("bundled_data_sha256").get<std::string>()));
  // The fingerprint: SHA-256 of "path sha256\n" for each bundled file, in sorted path order.
  const CommandResult digest = run_command("cd " + source_dir +
                                           " && for f in $(ls hardware/*.json models/*.json | LC_ALL=C sort); do "
                                           "printf '%s %s\\n' \"$f\" \"$(sha256sum \"$f\" | cut -d' ' -f1)\"; "
                                           "done | sha256sum | cut -d' ' -f1");
  CHECK(digest.out == build.at("bundled_data_sha256").get<std::string>() + "\n");
}

TEST_CASE("reports: the old token flags still work, with one note") {
  const std::string tail = "--gpus h100 --rps 5 --tpot-ms 50 --ttft-ms 2000 --price all=2 --format json";
  const CommandResult old = roofline("plan --model llama-3.1-8b --prompt 1000 --output 200 " + tail);
  const CommandResult renamed = roofline("plan --model llama-3.1-8b --prompt-tokens 1000 --output-tokens 200 " + tail);
  REQUIRE(old.exit_code == 0);
  REQUIRE(renamed.exit_code == 0);
  CHECK(json::parse(old.out).at("results") == json::parse(renamed.out).at("results"));
  CHECK(count_of(old.err, "note: --prompt is deprecated; it is now --prompt-tokens") == 1);
  CHECK(count_of(old.err, "note: --output is deprecated; it is now --output-tokens") == 1);
  CHECK(renamed.err.empty());
  const CommandResult both =
      roofline("plan --model llama-3.1-8b --prompt 1000 --prompt-tokens 1000 --output 200 " + tail);
  CHECK(both.exit_code == 2);
  CHECK(both.out.empty());
}

TEST_CASE("reports: the bash completion is generated from the command line") {
  const auto dir = scratch("completion");
  const CommandResult script = roofline("completion bash -o " + (dir / "roofline.bash").string());
  REQUIRE(script.exit_code == 0);
  // Completes the words of a command line as bash would ask: COMP_WORDS and COMP_CWORD.
  const auto complete = [&](const std::string& words, int index) {
    return run_command("bash -c 'source " + (dir / "roofline.bash").string() + "; COMP_WORDS=(" + words +
                       "); COMP_CWORD=" + std::to_string(index) + "; _roofline; echo \"${COMPREPLY[*]}\"'")
        .out;
  };
  CHECK(complete("roofline ll", 1) == "llm\n");
  CHECK(complete("roofline op ge", 2) == "gemm gemv\n");
  CHECK(complete("roofline llm --form", 2) == "--format\n");
  CHECK(complete("roofline llm --format \"\"", 3) == "table json csv markdown html\n");
  CHECK(complete("roofline plan --prompt-t", 2) == "--prompt-tokens\n");
  const CommandResult zsh = roofline("completion zsh");
  CHECK(zsh.out.starts_with("#compdef roofline\n"));
  CHECK_THAT(zsh.out, Contains("\"llm --format\") reply=(table json csv markdown html) ;;"));
}

TEST_CASE("reports: the man page lists every command and renders without warnings") {
  const auto dir = scratch("man");
  REQUIRE(roofline("man -o " + (dir / "roofline.1").string()).exit_code == 0);
  const std::string page = slurp(dir / "roofline.1");
  CHECK(page.starts_with(".TH ROOFLINE 1"));
  for (const char* command : {"llm", "serve", "plan", "validate", "bench", "op gemm", "hw list", "completion", "man"}) {
    CHECK_THAT(page, Contains(".SS \"roofline " + std::string(command) + "\""));
  }
  CHECK_THAT(page, Contains("\\fB\\-\\-prompt\\-tokens\\fR"));
  const CommandResult groff = run_command("groff -man -Tutf8 -ww -z " + (dir / "roofline.1").string());
  CHECK(groff.exit_code == 0);
  CHECK(groff.err.empty());
}

TEST_CASE("reports: plot with a whole bench run says in one line how many labels became tooltips") {
  const CommandResult plot = roofline("plot --gpu h200 --measured " + source_dir +
                                      "/tests/data/bench/h200-memory-2026-11-30.json -o /dev/null");
  REQUIRE(plot.exit_code == 0);
  CHECK(count_of(plot.err, "no room for") == 1);
  CHECK_THAT(plot.err, Contains("labels ("));
  CHECK_THAT(plot.err, Contains("): they are their markers' tooltips"));
}
