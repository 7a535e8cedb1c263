#pragma once

// What every suite runner in this folder needs and the harness does not provide.

#include <cstddef>
#include <cstdint>

namespace roofline::bench::cuda {

// An element count (non-negative, from a case table) as a size for buffers and spans.
[[nodiscard]] inline std::size_t as_size(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

}  // namespace roofline::bench::cuda
