#pragma once

#include <string>

namespace roofline::cli {

// What `roofline --version` prints: the version, the commit (and whether the tree was dirty when
// CMake configured), the build (type, compiler, CUDA and MPI or "off"), and the fingerprint of the
// bundled hardware and model files, as every JSON report's "tool_build" carries them.
[[nodiscard]] std::string version_text();

}  // namespace roofline::cli
