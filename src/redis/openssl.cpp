#include "redis/openssl.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>
#include <optional>

#include "util/exit_status.hpp"

namespace redlock::redis {
namespace {

// The soname of the OpenSSL 3 that redlock was built against.
constexpr const char* k_libssl = "libssl.so.3";

struct Loaded {
  std::optional<OpenSsl> table;
  std::string error;  // why it could not be loaded
};

template <typename Fn>
void bind(void* lib, Fn& into, const char* name, std::string& error) {
  void* sym = ::dlsym(lib, name);
  if (sym == nullptr && error.empty()) {
    error = fmt::format("{} has no {}", k_libssl, name);
  }
  into = reinterpret_cast<Fn>(sym);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): dlsym's contract
}

Loaded load() {
  Loaded out;
  // RTLD_LOCAL: OpenSSL's symbols stay out of the global namespace.
  void* lib = ::dlopen(k_libssl, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    out.error = why != nullptr ? why : k_libssl;
    return out;
  }
  OpenSsl t{};
  std::string& e = out.error;
#define REDLOCK_BIND(name) bind(lib, t.name, #name, e)
  REDLOCK_BIND(TLS_client_method);
  REDLOCK_BIND(SSL_CTX_new);
  REDLOCK_BIND(SSL_CTX_free);
  REDLOCK_BIND(SSL_CTX_ctrl);
  REDLOCK_BIND(SSL_CTX_set_verify);
  REDLOCK_BIND(SSL_CTX_set_default_verify_paths);
  REDLOCK_BIND(SSL_CTX_load_verify_locations);
  REDLOCK_BIND(SSL_CTX_use_certificate_chain_file);
  REDLOCK_BIND(SSL_CTX_use_PrivateKey_file);
  REDLOCK_BIND(SSL_CTX_check_private_key);
  REDLOCK_BIND(SSL_new);
  REDLOCK_BIND(SSL_free);
  REDLOCK_BIND(SSL_ctrl);
  REDLOCK_BIND(SSL_set_fd);
  REDLOCK_BIND(SSL_get0_param);
  REDLOCK_BIND(SSL_connect);
  REDLOCK_BIND(SSL_read);
  REDLOCK_BIND(SSL_write);
  REDLOCK_BIND(SSL_get_error);
  REDLOCK_BIND(SSL_get_verify_result);
  REDLOCK_BIND(ERR_get_error);
  REDLOCK_BIND(ERR_peek_error);
  REDLOCK_BIND(ERR_clear_error);
  REDLOCK_BIND(ERR_error_string_n);
  REDLOCK_BIND(X509_verify_cert_error_string);
  REDLOCK_BIND(X509_VERIFY_PARAM_set1_host);
  REDLOCK_BIND(X509_VERIFY_PARAM_set1_ip_asc);
#undef REDLOCK_BIND
  if (e.empty()) {
    out.table = t;
  }
  return out;
}

// Loaded once, by the first rediss:// endpoint (before any thread starts;
// the once flag makes it safe regardless).
const Loaded& loaded() {
  static std::once_flag once;
  static Loaded result;
  std::call_once(once, [] { result = load(); });
  return result;
}

}  // namespace

const OpenSsl& openssl() {
  const Loaded& l = loaded();
  if (!l.table) {
    throw Error(ExitStatus::k_unavailable,
                fmt::format("rediss:// needs OpenSSL 3 and it cannot be loaded: {} (install libssl3)", l.error));
  }
  return *l.table;
}

}  // namespace redlock::redis
