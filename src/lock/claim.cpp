#include "lock/claim.hpp"

namespace redlock::lock {

const char* mode_name(Claim::Mode mode) {
  switch (mode) {
    case Claim::Mode::k_semaphore:
      return "semaphore";
    case Claim::Mode::k_shared:
      return "shared";
    case Claim::Mode::k_exclusive:
      break;
  }
  return "exclusive";
}

Claim::Mode mode_named(std::string_view name) {
  if (name == "semaphore") {
    return Claim::Mode::k_semaphore;
  }
  return name == "shared" ? Claim::Mode::k_shared : Claim::Mode::k_exclusive;
}

}  // namespace redlock::lock
