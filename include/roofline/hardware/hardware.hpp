#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/core/dtype.hpp"
#include "roofline/core/embedded_file.hpp"

namespace roofline {

// One GPU SKU, read from a hardware file that passed hardware/schema.json. Figures are stored
// in the units of their keys; the accessors below convert to SI (FLOP/s, B/s, bytes).
struct GpuSpec {
  std::string id;
  std::vector<std::string> aliases;
  std::string name;
  std::string vendor;
  std::string architecture;
  int release_year = 0;

  int units = 0;  // SMs or CUs
  std::string unit_name;
  double boost_clock_mhz = 0;
  std::array<std::optional<double>, peak_class_names.size()> peak_tflops{};

  std::string memory_type;
  double memory_capacity_gb = 0;
  double memory_bandwidth_tbps = 0;
  double l2_mb = 0;
  std::optional<double> smem_per_unit_kb;
  std::optional<double> scale_up_bidir_gbps;
  std::string scale_up_name;
  double pcie_bidir_gbps = 0;
  double tdp_w = 0;

  std::string origin;       // where it came from: a path, or "bundled:hardware/<id>.json"
  nlohmann::json document;  // the file as loaded (after any --set overrides)

  [[nodiscard]] std::optional<double> peak_flops(PeakClass peak) const;
  // The rate that bounds matrix math in `type` on this GPU (see DTypeInfo::matrix_peaks).
  [[nodiscard]] std::optional<double> matrix_peak_flops(DType type) const;
  // Which peak class matrix_peak_flops(type) uses, if any.
  [[nodiscard]] std::optional<PeakClass> matrix_peak_class(DType type) const;
  [[nodiscard]] double memory_bandwidth_bytes_per_s() const { return memory_bandwidth_tbps * 1e12; }
  [[nodiscard]] double memory_capacity_bytes() const { return memory_capacity_gb * 1e9; }
  [[nodiscard]] double l2_bytes() const { return l2_mb * 1e6; }
};

// One problem found in a hardware file.
struct HardwareFinding {
  enum class Level : std::uint8_t { error, warning };
  Level level = Level::error;
  std::string file;
  std::string key;  // JSON pointer, e.g. /memory/bandwidth_tbps
  std::string message;
};

// Parses and validates one hardware document. Every schema violation and every dangling
// `source` reference is reported; the returned spec is set only when there is no error.
struct LoadResult {
  std::optional<GpuSpec> spec;
  std::vector<HardwareFinding> errors;
};
[[nodiscard]] LoadResult load_hardware_document(std::string_view text, const std::string& origin);

// The physics checks of `hw check`: bandwidth = bus width x pin rate / 8, and each peak =
// units x boost clock x ops per clock where the file gives them. A mismatch above
// `tolerance` (relative) is a warning that names both numbers.
[[nodiscard]] std::vector<HardwareFinding> check_physics(const GpuSpec& spec, double tolerance = 0.03);

// Where to look for hardware files beyond the bundled ones.
struct HardwareSearch {
  std::vector<std::filesystem::path> directories;  // later entries override earlier ones
  // The directories of --hardware-dir (if given) after those of ROOFLINE_HARDWARE_PATH.
  static HardwareSearch from_flag_and_environment(const std::optional<std::string>& flag_dir);
};

// All known GPUs: the bundled database, then user directories (a user file with a bundled id
// replaces the bundled one). Throws InputError (exit 2) on any invalid user file.
//
// What is validated when: every user file (--hardware-dir, ROOFLINE_HARDWARE_PATH) is parsed and
// validated by load(), whichever GPU is asked for, so that a broken file is reported at once. The
// bundled files are indexed by the id and aliases the build read from them (EmbeddedFile), and
// each is parsed and validated the first time it is asked for: by find() for one GPU, by all()
// (and resolve_list("all")) for every one. Names that clash (an alias naming two GPUs) are an
// error of load() either way. A first look-up fills the registry's cache: share one registry
// between threads only after all() was called.
class HardwareRegistry {
 public:
  [[nodiscard]] static HardwareRegistry load(const HardwareSearch& search);
  [[nodiscard]] static HardwareRegistry bundled_only() { return load(HardwareSearch{}); }

  // Every GPU, each parsed and validated.
  [[nodiscard]] const std::vector<GpuSpec>& all() const;
  // Finds a GPU by id or alias, case-insensitively; throws InputError with a suggestion.
  [[nodiscard]] const GpuSpec& find(std::string_view name) const;
  // "all", or a comma-separated list of names; keeps the order given, drops repeats.
  [[nodiscard]] std::vector<const GpuSpec*> resolve_list(std::string_view list) const;
  // Notes for the user (a user file overriding a bundled one), to print on stderr.
  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }

  void add(GpuSpec spec);

 private:
  void add_bundled(const EmbeddedFile& file);
  void add_entry(GpuSpec spec, std::string_view unparsed);
  // The GPU at `index`, parsed and validated if it was still a bundled file's index entry.
  const GpuSpec& loaded(std::size_t index) const;

  // In registry order; a bundled GPU not asked for yet holds only its id, aliases and origin, and
  // its file's text waits in unparsed_ (empty once parsed, and for GPUs given whole).
  mutable std::vector<GpuSpec> gpus_;
  mutable std::vector<std::string_view> unparsed_;
  std::vector<std::string> notes_;
};

// Applies "what if" overrides (`--set key=value`) to a spec: key is a figure's path in the file
// ("memory.bandwidth_tbps", "peak_tflops.bf16"), a peak shorthand ("bf16_tflops"), the alias
// "hbm_bandwidth_tbps", or the last component of a figure's path when that is unique
// ("l2_mb", "boost_clock_mhz"). The result is validated again. Throws InputError.
[[nodiscard]] GpuSpec apply_overrides(const GpuSpec& spec, std::span<const std::string> assignments);

// The JSON Schema of hardware files (the embedded hardware/schema.json).
[[nodiscard]] const nlohmann::json& hardware_schema();

// Which hardware file describes a device, matched by its name (see match_hardware()).
struct HardwareMatch {
  const GpuSpec* spec = nullptr;
  std::string detail;  // how it matched, or why nothing did
};

// Matches the device name the driver reports ("NVIDIA H200", "NVIDIA H100 80GB HBM3",
// "NVIDIA A100-SXM4-40GB") to a spec file: every word of the device name (except "nvidia")
// must appear among the spec's id, aliases, name, memory type and "<capacity>gb". Several
// candidates: the one with an alias equal to the device's model word; otherwise none.
[[nodiscard]] HardwareMatch match_hardware(std::string_view device_name, const HardwareRegistry& registry);

}  // namespace roofline
