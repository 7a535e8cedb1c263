// Fuzzes the Hugging Face cache lookup (`--model ORG/NAME`, find_in_hf_cache) over cache layouts
// the input describes, then reads the config.json it finds as the CLI does. The input's lines:
//   1  the id asked for (looked up only where looks_like_hf_id accepts it, as the CLI does)
//   2  --revision ("-": none)
//   3  refs/main's content ("-": no refs/main)
//   4  the snapshot directories, comma-separated (names holding '/' or "..", or empty, are left out:
//      the harness never writes outside its scratch cache)
//   5  the snapshots holding a config.json, comma-separated, of those of line 4
//   6+ the config.json they hold
// The layout is built under one scratch cache (a process-wide temporary directory, emptied per
// input) as models--ORG--NAME of the id on line 1, or of fuzz/model where line 1 is no id.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/llm/hf_config.hpp"

namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines_of(std::string_view text, std::size_t fields) {
  std::vector<std::string> lines;
  while (lines.size() + 1 < fields) {
    const std::size_t end = text.find('\n');
    if (end == std::string_view::npos) break;
    lines.emplace_back(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
  lines.emplace_back(text);  // the last field keeps its newlines (config.json)
  lines.resize(fields);
  return lines;
}

std::vector<std::string> names_of(const std::string& list) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    std::string name = list.substr(start, end - start);
    const bool safe = !name.empty() && name.size() < 200 && name.find('/') == std::string::npos &&
                      name.find("..") == std::string::npos && name.find('\0') == std::string::npos && name != ".";
    if (safe) names.push_back(std::move(name));
    start = end + 1;
  }
  return names;
}

const fs::path& scratch_cache() {
  static const fs::path cache = fs::temp_directory_path() / ("roofline-fuzz-hf-cache-" + std::to_string(getpid()));
  return cache;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> field = lines_of(std::string_view(reinterpret_cast<const char*>(data), size), 6);
  const std::string& id = field[0];
  const bool is_id = roofline::looks_like_hf_id(id);
  const std::string layout_id = is_id ? id : std::string("fuzz/model");
  const std::size_t slash = layout_id.find('/');
  const std::string repo = "models--" + layout_id.substr(0, slash) + "--" + layout_id.substr(slash + 1);
  // An id whose layout would leave the scratch cache is looked up (a read) but never built.
  const bool buildable = repo.find("..") == std::string::npos && repo.find('/') == std::string::npos &&
                         repo.find('\0') == std::string::npos && repo.size() < 250;
  const fs::path& cache = scratch_cache();
  std::error_code ec;
  fs::remove_all(cache, ec);
  const fs::path root = cache / (buildable ? repo : std::string("models--fuzz--model"));
  fs::create_directories(root / "snapshots", ec);
  if (field[2] != "-") {
    fs::create_directories(root / "refs", ec);
    write(root / "refs" / "main", field[2]);
  }
  for (const std::string& snapshot : names_of(field[3])) fs::create_directories(root / "snapshots" / snapshot, ec);
  for (const std::string& snapshot : names_of(field[4])) {
    if (fs::is_directory(root / "snapshots" / snapshot, ec))
      write(root / "snapshots" / snapshot / "config.json", field[5]);
  }
  const std::optional<std::string> revision = field[1] == "-" ? std::nullopt : std::optional<std::string>(field[1]);
  try {
    if (is_id) {
      const fs::path config = roofline::find_in_hf_cache(id, revision, {cache});
      (void)roofline::read_hf_config(config, {.id = id, .quant_side_file = std::nullopt});
    } else {
      // A config.json path inside a cache: the id comes from the layout.
      for (const std::string& snapshot : names_of(field[4])) {
        const fs::path config = root / "snapshots" / snapshot / "config.json";
        if (fs::is_regular_file(config, ec)) (void)roofline::read_hf_config(config);
      }
    }
  } catch (const roofline::Error&) {
    // Bad input is an expected outcome; anything else escapes and is a finding.
  }
  return 0;
}
