#include "util/log.hpp"

namespace redlock {

Verbosity& verbosity() {
  static Verbosity v = Verbosity::k_normal;
  return v;
}

}  // namespace redlock
