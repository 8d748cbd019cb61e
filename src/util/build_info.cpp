#include "util/build_info.hpp"

namespace redlock {

// Left out of a unity build (CMakeLists.txt): in an archive member of its
// own, this definition is linked only into programs that have no other.
const char* build_commit() noexcept {
  return "unknown";
}

}  // namespace redlock
