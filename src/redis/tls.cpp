#include "redis/tls.hpp"

#include <fmt/format.h>

#include "redis/openssl.hpp"
#include "util/exit_status.hpp"

namespace redlock::redis {

std::string tls_error_text() {
  const OpenSsl& ssl = openssl();
  unsigned long e = ssl.ERR_get_error();
  ssl.ERR_clear_error();
  if (e == 0) {
    return "unknown TLS error";
  }
  char buf[256];
  ssl.ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

std::shared_ptr<TlsContext> TlsContext::create(const TlsOptions& options) {
  const OpenSsl& ssl = openssl();
  SSL_CTX* ctx = ssl.SSL_CTX_new(ssl.TLS_client_method());
  if (ctx == nullptr) {
    throw Error(ExitStatus::k_unavailable, "cannot create a TLS context: " + tls_error_text());
  }
  std::shared_ptr<TlsContext> out(new TlsContext(ctx, options));
  (void)ssl.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, nullptr);
  (void)ssl.SSL_CTX_ctrl(ctx, SSL_CTRL_MODE, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER,
                         nullptr);
  if (options.insecure) {
    ssl.SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  } else {
    ssl.SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    int ok = options.ca_file.empty() ? ssl.SSL_CTX_set_default_verify_paths(ctx)
                                     : ssl.SSL_CTX_load_verify_locations(ctx, options.ca_file.c_str(), nullptr);
    if (ok != 1) {
      throw UsageError(fmt::format("cannot load TLS CA certificates from '{}': {}",
                                   options.ca_file.empty() ? "the system store" : options.ca_file, tls_error_text()));
    }
  }
  if (options.cert_file.empty() != options.key_file.empty()) {
    throw UsageError("--tls-cert and --tls-key go together");
  }
  if (!options.cert_file.empty()) {
    if (ssl.SSL_CTX_use_certificate_chain_file(ctx, options.cert_file.c_str()) != 1) {
      throw UsageError(fmt::format("cannot load --tls-cert '{}': {}", options.cert_file, tls_error_text()));
    }
    if (ssl.SSL_CTX_use_PrivateKey_file(ctx, options.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      throw UsageError(fmt::format("cannot load --tls-key '{}': {}", options.key_file, tls_error_text()));
    }
    if (ssl.SSL_CTX_check_private_key(ctx) != 1) {
      throw UsageError("--tls-key does not match --tls-cert");
    }
  }
  return out;
}

TlsContext::~TlsContext() {
  openssl().SSL_CTX_free(m_ctx);
}

}  // namespace redlock::redis
