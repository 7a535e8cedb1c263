// roofline --version (build_info.hpp).
#include "build_info.hpp"

#include <fmt/format.h>

#include "roofline/core/version.hpp"
#include "roofline/report/report.hpp"

namespace roofline::cli {

std::string version_text() {
  const nlohmann::json build = tool_build();
  return fmt::format(
      "roofline {}\n"
      "commit:  {}{}\n"
      "build:   {}, {}; CUDA {}; MPI {}\n"
      "data:    bundled hardware and models ({} files) sha256 {}",
      tool_version, build.at("commit").get<std::string>(),
      build.at("dirty").get<bool>() ? " (dirty: uncommitted changes when built)" : "", tool_build_type, tool_compiler,
      tool_cuda, tool_mpi, bundled_data_files, bundled_data_hash);
}

}  // namespace roofline::cli
