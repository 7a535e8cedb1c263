// Prints what the installed core library says of one storage format and one ridge point, and the
// message of its bad-input error, so that the install test can check all three.
#include <iostream>
#include <roofline/core/dtype.hpp>
#include <roofline/core/error.hpp>
#include <roofline/core/roofline.hpp>
#include <roofline/core/version.hpp>

int main() {
  const roofline::DType format = roofline::parse_dtype("int4_g128");
  std::cout << roofline::name_of(format) << ' ' << roofline::bytes_per_element(format) << '\n';
  std::cout << "ridge " << roofline::ridge_point(989.4e12, 3.35e12) << '\n';
  std::cout << "version " << roofline::tool_version << '\n';
  try {
    (void)roofline::parse_dtype("fp7");
  } catch (const roofline::InputError& e) {
    std::cout << "error " << e.what() << '\n';
  }
  return 0;
}
