// Hardening II (issue 22), through the real binary: each TEST_CASE is named after the finding it
// shows and has a row in docs/bad-input.md. Commands that could hang or run for hours without
// the fix run under `timeout`, so that a regression fails (exit 124) instead of stalling CI.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "run_binary.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

const std::string source_dir = ROOFLINE_SOURCE_DIR;
const std::string memory_run = source_dir + "/tests/data/bench/h200-memory-2026-11-30.json";
const std::string compute_run = source_dir + "/tests/data/bench/h200-compute-2026-11-30-run2.json";

// A GEMM sweep of 10^6 x 10^4 = 10^10 CSV rows: hours to write, so only a stopped run ends.
const std::string endless_csv = "op gemm --m 1:1000000:+1 --n 1:10000:+1 --k 64 --gpu h100 --format csv";

// Starts the binary with `args` (split on spaces), stdout and stderr to /dev/null, and the four
// cleanup signals at their default action whatever the test runner set.
pid_t start(const std::string& args) {
  std::vector<std::string> words{ROOFLINE_BINARY};
  for (std::size_t at = 0; at < args.size();) {
    const std::size_t space = args.find(' ', at);
    words.push_back(args.substr(at, space == std::string::npos ? std::string::npos : space - at));
    at = space == std::string::npos ? args.size() : space + 1;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(s, SIG_DFL);
    std::FILE* null = std::fopen("/dev/null", "w");
    if (null != nullptr) {
      ::dup2(::fileno(null), STDOUT_FILENO);
      ::dup2(::fileno(null), STDERR_FILENO);
    }
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    ::execv(argv.front(), argv.data());
    ::_exit(127);
  }
  return pid;
}

// The cells of one line of ncu's CSV: every cell quoted, no quote inside a cell.
std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  for (std::size_t at = line.find('"'); at != std::string::npos;) {
    const std::size_t end = line.find('"', at + 1);
    cells.push_back(line.substr(at + 1, end - at - 1));
    at = line.find('"', end + 1);
  }
  return cells;
}

bool has_temporary(const std::filesystem::path& dir) {
  for (const std::string& name : entries(dir)) {
    if (name.ends_with(".tmp")) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("hardening II #1: a 30,000-character id does not crash the schema matcher") {
  const auto dir = scratch("h1");
  json spec = user_gpu();
  spec["id"] = std::string(30000, 'a');
  write_file(dir / "long.json", spec.dump());
  const std::string refused =
      "/id: is 30000 bytes long, more than the 1024 a string checked against a pattern may have";
  expect_bad_input(roofline("hw list --hardware-dir " + dir.string()), refused);
  // Through ROOFLINE_HARDWARE_PATH it crashed every command, hw list included.
  expect_bad_input(run_command("ROOFLINE_HARDWARE_PATH=" + dir.string() + " " + ROOFLINE_BINARY + " ridge --gpu h100"),
                   refused);
  spec = user_gpu();
  spec["aliases"] = {std::string(30000, 'b')};
  write_file(dir / "long.json", spec.dump());
  expect_bad_input(roofline("hw list --hardware-dir " + dir.string()), "/aliases/0: is 30000 bytes long");
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardening II #3: a FIFO where a file is read is refused, never waited on") {
  const auto dir = scratch("h3");
  REQUIRE(::mkfifo((dir / "stray.json").c_str(), 0600) == 0);
  // Without the fix each of these waits forever for a writer; timeout turns that into exit 124.
  expect_bad_input(
      run_command("timeout 20 " + std::string(ROOFLINE_BINARY) + " hw list --hardware-dir " + dir.string()),
      "stray.json: is a FIFO, not a regular file");
  expect_bad_input(
      run_command("ROOFLINE_HARDWARE_PATH=" + dir.string() + " timeout 20 " + ROOFLINE_BINARY + " ridge --gpu h100"),
      "is a FIFO, not a regular file");
  expect_bad_input(run_command("timeout 20 " + std::string(ROOFLINE_BINARY) + " validate --measured " +
                               (dir / "stray.json").string()),
                   "is a FIFO, not a regular file");
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardening II #4: a full disk stops a streamed CSV at the first failed write") {
  // /dev/full fails every write with ENOSPC, as a full disk does. Before the fix the 10^10 rows
  // were all computed first (hours); timeout 60 fails the test on that.
  expect_bad_input(run_command("timeout 60 " + std::string(ROOFLINE_BINARY) + " " + endless_csv + " -o /dev/full"),
                   "roofline: -o /dev/full: write failed (No space left on device)");
  expect_bad_input(run_command("timeout 60 " + std::string(ROOFLINE_BINARY) + " " + endless_csv + " >/dev/full"),
                   "roofline: stdout: write failed (No space left on device)");
}

TEST_CASE("hardening II: a CSV report that cannot be written says only why, and leaves no file") {
  const auto dir = scratch("csv-notes");
  // The formulas of a CSV report are notes on stderr (CSV has no place for them); they used to
  // come first, so that the error was the last of three lines. Now they follow a report that was
  // written, and a failed one prints the error alone.
  const std::string sweep = "op gemm --m 1:64:x2 --n 8 --k 8 --gpu h100 --format csv";
  expect_bad_input(roofline(sweep + " -o /dev/full"), "roofline: -o /dev/full: write failed (No space left on device)");
  expect_bad_input(roofline(sweep + " >/dev/full"), "roofline: stdout: write failed (No space left on device)");
  // The whole-report CSV (--table picks one table of it) writes through emit: the same.
  expect_bad_input(roofline(sweep + " --table gemm -o /dev/full"), "-o /dev/full: write failed");
  // Written, the notes follow: the two formula notes of a GEMM.
  const CommandResult written = roofline(sweep + " -o " + (dir / "sweep.csv").string());
  CHECK(written.exit_code == 0);
  CHECK_THAT(written.err, Contains("roofline: note: FLOPs = 2 m n k batch"));
  const std::string csv = slurp(dir / "sweep.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 8);  // the header and m = 1, 2, 4, ..., 64
  // A regular file that stops taking bytes part-way (a file size limit of 100 blocks of 512 B,
  // with SIGXFSZ ignored so that write(2) fails with EFBIG): no partial file, no temporary file.
  std::filesystem::remove(dir / "sweep.csv");
  const std::string big =
      "op gemm --m 1:100000:+1 --n 8 --k 8 --gpu h100 --format csv -o " + (dir / "big.csv").string();
  expect_bad_input(
      run_command("sh -c 'trap \"\" XFSZ; ulimit -f 100; exec " + std::string(ROOFLINE_BINARY) + " " + big + "'"),
      "big.csv: write failed (File too large)");
  CHECK(entries(dir).empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardening II #5: Ctrl-C, SIGTERM, SIGHUP and SIGPIPE remove the temporary file") {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    INFO("signal " << signal_number);
    const auto dir = scratch("h5");
    const pid_t pid = start(endless_csv + " -o " + (dir / "sweep.csv").string());
    REQUIRE(pid > 0);
    // Wait (at most 60 s) until the sweep writes into its temporary file.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!has_temporary(dir) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE(has_temporary(dir));
    ::kill(pid, signal_number);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    // The process ends by the signal, as it did before (a shell sees 128 + the signal).
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == signal_number);
    CHECK(entries(dir).empty());
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("hardening II #6: a failed write to stdout is an error, not exit 0") {
  expect_bad_input(roofline("ridge --gpu h100 --format json >/dev/full"),
                   "stdout: write failed (No space left on device)");
  // A closed stdout: the report has nowhere to go.
  expect_bad_input(roofline("ridge --gpu h100 >&-"), "stdout: write failed (Bad file descriptor)");
  expect_bad_input(roofline("--help >/dev/full"), "stdout: write failed");
}

TEST_CASE("hardening II #7: -o onto the command's own input is refused") {
  const auto dir = scratch("h7");
  std::filesystem::copy_file(memory_run, dir / "run.json");
  const std::string before = slurp(dir / "run.json");
  expect_bad_input(
      roofline("calibrate --measured " + (dir / "run.json").string() + " -o " + (dir / "run.json").string()),
      "is an input of this run");
  CHECK(slurp(dir / "run.json") == before);
  // An HF config, and a hardware file reached through a link.
  write_file(dir / "config.json", slurp(source_dir + "/tests/fuzz-corpus/hf_config/llama-3.1-70b.json"));
  expect_bad_input(roofline("llm --hf-config " + (dir / "config.json").string() +
                            " --gpu h100 --tp 8 --context 1024 --format json -o " + (dir / "config.json").string()),
                   "is an input of this run");
  std::filesystem::create_directories(dir / "hardware");
  write_file(dir / "hardware" / "gpu.json", user_gpu().dump());
  std::filesystem::create_symlink("hardware/gpu.json", dir / "report.json");
  expect_bad_input(roofline("ridge --gpu my-gpu --hardware-dir " + (dir / "hardware").string() + " -o " +
                            (dir / "report.json").string()),
                   "is an input of this run");
  CHECK(json::parse(slurp(dir / "hardware" / "gpu.json"))["id"] == "my-gpu");
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardening II #8: no note reaches a report file and its mode and a dangling link are kept") {
  const auto dir = scratch("h8");
  json spec = json::parse(slurp(source_dir + "/hardware/h100-sxm.json"));  // replaces the bundled h100: a note
  write_file(dir / "h100.json", spec.dump());
  // stderr closed: the note used to land in the report's temporary file (descriptor 2).
  const CommandResult closed = run_command("(" + std::string(ROOFLINE_BINARY) + " ridge --gpu h100 --hardware-dir " +
                                           dir.string() + " --format csv -o " + (dir / "out.csv").string() + " 2>&-)");
  CHECK(closed.exit_code == 0);
  CHECK_THAT(slurp(dir / "out.csv"), !Contains("roofline: note"));
  CHECK(slurp(dir / "out.csv").starts_with("gpu"));

  write_file(dir / "private.csv", "old\n");
  REQUIRE(::chmod((dir / "private.csv").c_str(), 0600) == 0);
  REQUIRE(roofline("ridge --gpu h100 --format csv -o " + (dir / "private.csv").string()).exit_code == 0);
  struct stat status {};
  REQUIRE(::stat((dir / "private.csv").c_str(), &status) == 0);
  CHECK((status.st_mode & 0777) == 0600);

  std::filesystem::create_symlink("made.csv", dir / "dangling.csv");
  REQUIRE(roofline("ridge --gpu h100 --format csv -o " + (dir / "dangling.csv").string()).exit_code == 0);
  CHECK(std::filesystem::is_symlink(dir / "dangling.csv"));
  CHECK(slurp(dir / "made.csv").starts_with("gpu"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardening II #10: plot --op for a format without a peak is refused") {
  // An H200 states no fp4 peak: the point was drawn at 52,429 TFLOP/s with no roof above it.
  expect_bad_input(roofline("plot --gpu h200 --op gemm:m=8192,n=8192,k=8192,dtype=fp4 --format json"),
                   "h200-sxm states no peak for this math");
}

TEST_CASE("hardening II #11: absurd figures are refused before they print inf or overflow an int") {
  const auto dir = scratch("h11");
  json spec = user_gpu();
  spec["compute"]["units"]["value"] = 1e300;  // the SM count
  write_file(dir / "gpu.json", spec.dump());
  const CommandResult check = roofline("hw check " + (dir / "gpu.json").string());
  CHECK(check.exit_code == 1);
  CHECK_THAT(check.out + check.err, Contains("is beyond any GPU"));
  CHECK_THAT(check.out + check.err, !Contains("-2147483648"));
  expect_bad_input(roofline("ridge --gpu h100 --set bf16_tflops=1e308"), "is beyond any GPU");
  expect_bad_input(roofline("ridge --gpu h100 --set hbm_bandwidth_tbps=1e-300"), "is beyond any GPU");
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardening II #12: a calibration efficiency beyond its bound is refused") {
  const auto dir = scratch("h12");
  json calibration = json::parse(slurp(source_dir + "/tests/fuzz-corpus/calibration_loader/provenance.json"));
  json& point = calibration["tables"].begin().value()["points"][0];
  point["efficiency"] = 1e6;
  write_file(dir / "cal.json", calibration.dump());
  const std::string op = "op gemv --m 4096 --k 4096 --gpu h200 --calibration " + (dir / "cal.json").string();
  expect_bad_input(roofline(op), "/efficiency: 1000000 is outside (0, 1.5]");
  // Within the bound but not ideal_us / measured_us: an edited file.
  point["efficiency"] = point["ideal_us"].get<double>() / point["measured_us"].get<double>() * 1.1;
  write_file(dir / "cal.json", calibration.dump());
  expect_bad_input(roofline(op), "is not ideal_us / measured_us");
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardening II #14: validate --baseline on two unrelated runs fails") {
  // The memory and compute runs share no benchmark: nothing is compared.
  expect_bad_input(roofline("validate --baseline " + memory_run + " --measured " + compute_run),
                   "no benchmark was compared");
}

TEST_CASE("hardening II #15: llm --gpus 0 is refused") {
  expect_bad_input(roofline("llm --model llama-3.1-8b --gpu h100 --context 1024 --gpus 0"), "--gpus");
  expect_bad_input(roofline("llm --model llama-3.1-8b --gpu h100 --context 1024 --tp 0"), "--tp");
}

TEST_CASE("hardening II #16: flags a mode cannot use are refused, not ignored") {
  const auto dir = scratch("h16");
  expect_bad_input(roofline("validate --measured " + memory_run + " --json " + (dir / "run.json").string()),
                   "--json: writes the bench report of the run validate makes");
  const std::string csv = source_dir + "/tests/data/ncu/ncu-raw.csv";
  expect_bad_input(roofline("profile --from-csv " + csv + " --kernel gemm"), "--kernel: tells ncu which kernels");
  expect_bad_input(roofline("profile --kernel '(' -- true"), "--kernel: '(' is not a regular expression");
  CHECK(entries(dir).empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardening II #17: duplicate JSON keys, --set and --price entries are refused") {
  const auto dir = scratch("h17");
  std::string text = user_gpu().dump();
  text.insert(1, "\"id\": \"first\", ");
  write_file(dir / "gpu.json", text);
  expect_bad_input(roofline("hw list --hardware-dir " + dir.string()), "/: key 'id' is given twice");
  expect_bad_input(roofline("ridge --gpu h100 --set bf16_tflops=900 --set peak_tflops.bf16=800"),
                   "give each figure once");
  expect_bad_input(
      roofline("plan --model llama-3.1-8b --gpus h100 --rps 1 --prompt-tokens 128 --output-tokens 16 --tpot-ms 50 "
               "--ttft-ms 2000 --price h100=2 --price h100-sxm=3"),
      "--price h100-sxm: given twice");
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardening II #18: float flags refuse hexadecimal") {
  // CLI11 read "010" as octal 8, which divides llama-3.1-70b's 64 heads; 10 does not.
  expect_bad_input(roofline("llm --model llama-3.1-70b --gpu h100 --context 1024 --tp 010"),
                   "--tp 10 does not divide the 64 attention heads");
  // llm's --context is a sweep (op's syntax), whose parser reads decimal integers only.
  expect_bad_input(roofline("llm --model llama-3.1-70b --gpu h100 --context 0x400"), "'0x400' is not an integer");
  expect_bad_input(roofline("attainable --gpu h100 --ai 0x10"), "0x10");
  expect_bad_input(roofline("ridge --gpu h100 --set bf16_tflops=0x10"), "0x10");
  expect_bad_input(
      roofline("plan --model llama-3.1-8b --gpus h100 --rps 0x10 --prompt-tokens 128 --output-tokens 16 --tpot-ms 50 "
               "--ttft-ms 2000 --price all=2"),
      "0x10");
}

TEST_CASE("hardening II #19: profile answers bad input with exit 2, not 3") {
  const auto dir = scratch("h19");
  // The ncu table's header line and nothing after it: a table with no kernel row.
  const std::string csv = slurp(source_dir + "/tests/data/ncu/ncu-raw.csv");
  const std::size_t header = csv.find("\"ID\"");
  REQUIRE(header != std::string::npos);
  const std::string header_only = csv.substr(0, csv.find('\n', header) + 1);
  write_file(dir / "empty.csv", header_only);
  expect_bad_input(roofline("profile --from-csv " + (dir / "empty.csv").string() + " --gpu h200"), "holds no kernel");
  // The first kernel's duration set to 1e-300 s: its FLOP/s would print inf.
  const std::size_t units = csv.find('\n', header) + 1;
  const std::size_t first_row = csv.find('\n', units) + 1;
  const std::size_t column = split_csv_line(csv.substr(header, units - header - 1)).size();
  std::vector<std::string> cells = split_csv_line(csv.substr(first_row, csv.find('\n', first_row) - first_row));
  const std::vector<std::string> names = split_csv_line(csv.substr(header, units - header - 1));
  const auto duration = std::find(names.begin(), names.end(), "gpu__time_duration.sum");
  REQUIRE(duration != names.end());
  REQUIRE(cells.size() == column);
  cells[static_cast<std::size_t>(duration - names.begin())] = "1e-300";
  std::string row;
  for (const std::string& cell : cells) row += (row.empty() ? "\"" : ",\"") + cell + "\"";
  write_file(dir / "tiny.csv", csv.substr(0, first_row) + row + "\n");
  expect_bad_input(roofline("profile --from-csv " + (dir / "tiny.csv").string() + " --gpu h200"),
                   "s (gpu__time_duration.sum), outside [1e-09, 1e+06] s");
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardening II #19: profile -- a program that is not there is bad input, found before ncu is") {
  const auto dir = scratch("h19-program");
  // A stand-in for ncu that leaves a mark when it runs, and says it profiled nothing (exit 3):
  // the program check must come first, so a missing program never gets that far.
  const std::string ncu = (dir / "ncu").string();
  const std::string mark = (dir / "ncu-ran").string();
  write_script(ncu, "#!/bin/sh\ntouch '" + mark + "'\necho '==WARNING== No kernels were profiled.'\n");
  expect_bad_input(roofline("profile --ncu " + ncu + " -- ./missing-program --size 4"),
                   "profile: ./missing-program: no such file");
  // Not even looked for: an --ncu that does not exist is exit 3 only once the program is there.
  expect_bad_input(roofline("profile --ncu " + (dir / "absent").string() + " -- ./missing-program"), "no such file");
  expect_bad_input(run_command("PATH=/nonexistent " + std::string(ROOFLINE_BINARY) + " profile -- ./missing-program"),
                   "profile: ./missing-program: no such file");
  write_file(dir / "data.txt", "not a program\n");
  expect_bad_input(roofline("profile --ncu " + ncu + " -- " + (dir / "data.txt").string()),
                   "data.txt: is not executable");
  expect_bad_input(roofline("profile --ncu " + ncu + " -- " + dir.string()), ": is a directory");
  // A name without '/' is looked up on PATH, as execvp(3) does.
  expect_bad_input(run_command("PATH=" + dir.string() + " " + std::string(ROOFLINE_BINARY) + " profile --ncu " + ncu +
                               " -- no-such-program"),
                   "profile: no-such-program: no such program on PATH");
  CHECK_FALSE(std::filesystem::exists(mark));
  // Found on PATH, or in the current directory through an empty PATH entry: ncu runs (and,
  // being a stand-in, profiles nothing: exit 3).
  write_script(dir / "my-app", "#!/bin/sh\nexit 0\n");
  CHECK(run_command("PATH=" + dir.string() + ":/usr/bin:/bin " + std::string(ROOFLINE_BINARY) + " profile --ncu " +
                    ncu + " -- my-app")
            .exit_code == 3);
  CHECK(std::filesystem::exists(mark));
  std::filesystem::remove(mark);
  CHECK(run_command("cd " + dir.string() + " && PATH=:/usr/bin:/bin " + std::string(ROOFLINE_BINARY) +
                    " profile --ncu " + ncu + " -- my-app")
            .exit_code == 3);
  CHECK(std::filesystem::exists(mark));
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardening II #20: a misspelt command gets a suggestion") {
  expect_bad_input(roofline("lmm --model llama-3.1-8b"), "'lmm' is not a command (did you mean 'llm'?)");
  expect_bad_input(roofline("xyzzy"), "'xyzzy' is not a command");
}

TEST_CASE("hardening II #21: a huge measured file is refused before it is read") {
  const auto dir = scratch("h21");
  // 40 MiB, sparse: more than the 32 MiB cap of measured runs.
  write_file(dir / "run.json", "{");
  std::filesystem::resize_file(dir / "run.json", std::uintmax_t{40} << 20);
  expect_bad_input(roofline("validate --measured " + (dir / "run.json").string()),
                   "41943040 bytes, more than the 32 MiB an input file may have");
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardening II: -o - writes the report to stdout") {
  const CommandResult r = roofline("ridge --gpu h100 --format json -o -");
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["schema"] == "roofline.ridge.v1");
  CHECK_FALSE(std::filesystem::exists("-"));
}
