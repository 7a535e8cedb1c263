#include "fixture.hpp"

namespace roofline::fixture {

const HardwareRegistry& gpus() {
  static const HardwareRegistry r = HardwareRegistry::bundled_only();
  return r;
}

const ModelRegistry& models() {
  static const ModelRegistry r = ModelRegistry::bundled_only();
  return r;
}

}  // namespace roofline::fixture
