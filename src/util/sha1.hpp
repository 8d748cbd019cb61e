#pragma once

#include <string>
#include <string_view>

namespace redlock {

// SHA-1 of `data` as 40 lowercase hex digits: the name Redis gives a script
// (EVALSHA). Our own few lines rather than OpenSSL's SHA1(), which would
// initialise OpenSSL (providers, configuration) in every call that runs a
// script, TLS or not.
[[nodiscard]] std::string sha1_hex(std::string_view data);

}  // namespace redlock
