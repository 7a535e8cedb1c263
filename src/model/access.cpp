#include "roofline/model/access.hpp"

#include <stdexcept>
#include <string>

namespace roofline {
namespace {

void check_element(std::int64_t element_bytes) {
  const bool power_of_two = element_bytes > 0 && (element_bytes & (element_bytes - 1)) == 0;
  const bool small = power_of_two && element_bytes <= sector_bytes;
  const bool whole_sectors = element_bytes > 0 && element_bytes % sector_bytes == 0;
  if (!small && !whole_sectors) {
    throw std::invalid_argument("sector model: element size " + std::to_string(element_bytes) +
                                " B is neither a power of two up to 32 B nor a multiple of 32 B");
  }
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

SectorTraffic strided_traffic(std::int64_t accesses, std::int64_t stride_elements, std::int64_t element_bytes) {
  check_element(element_bytes);
  if (stride_elements < 1) throw std::invalid_argument("sector model: stride must be at least 1 element");
  if (accesses < 0) throw std::invalid_argument("sector model: negative access count");
  SectorTraffic traffic;
  traffic.useful_bytes = static_cast<double>(accesses) * static_cast<double>(element_bytes);
  if (accesses == 0) return traffic;
  const std::int64_t step = stride_elements * element_bytes;  // bytes from one element to the next
  if (step >= sector_bytes) {
    // Consecutive elements are at least a sector apart, so no two share one; an element of
    // 32 B or more covers whole sectors of its own (its size is a multiple of 32 then).
    traffic.sectors = static_cast<double>(accesses) * static_cast<double>(ceil_div(element_bytes, sector_bytes));
  } else {
    // Gaps shorter than a sector: every sector of the span from the first to the last byte is
    // touched (a smaller-than-sector power-of-two element never straddles two sectors).
    const std::int64_t span = (accesses - 1) * step + element_bytes;
    traffic.sectors = static_cast<double>(ceil_div(span, sector_bytes));
  }
  return traffic;
}

SectorTraffic contiguous_traffic(std::int64_t elements, std::int64_t element_bytes) {
  return strided_traffic(elements, 1, element_bytes);
}

SectorTraffic random_traffic(std::int64_t accesses, std::int64_t element_bytes) {
  check_element(element_bytes);
  if (accesses < 0) throw std::invalid_argument("sector model: negative access count");
  SectorTraffic traffic;
  traffic.useful_bytes = static_cast<double>(accesses) * static_cast<double>(element_bytes);
  traffic.sectors = static_cast<double>(accesses) * static_cast<double>(ceil_div(element_bytes, sector_bytes));
  return traffic;
}

double sectors_per_warp_request(std::int64_t stride_elements, std::int64_t element_bytes) {
  return strided_traffic(warp_size, stride_elements, element_bytes).sectors;
}

}  // namespace roofline
