// URL parsing (--redis, $REDLOCK_URL): any input is either a UsageError or
// an endpoint whose display form parses back to the same endpoint.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "redis/endpoint.hpp"
#include "util/exit_status.hpp"

namespace {

void round_trip(const redlock::redis::Endpoint& ep) {
  // display() leaves the password out, and so does the copy it parses to.
  const std::string shown = ep.display();
  const redlock::redis::Endpoint again = redlock::redis::parse_endpoint(shown);
  if (again.display() != shown || again.kind != ep.kind || again.tls != ep.tls || again.db != ep.db) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    round_trip(redlock::redis::parse_endpoint(text));
  } catch (const redlock::UsageError&) {
  }
  try {
    for (const auto& ep : redlock::redis::parse_endpoint_list(text)) {
      round_trip(ep);
    }
  } catch (const redlock::UsageError&) {
  }
  return 0;
}
