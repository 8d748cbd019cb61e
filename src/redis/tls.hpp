#pragma once

#include <memory>
#include <string>

typedef struct ssl_ctx_st SSL_CTX;

namespace redlock::redis {

struct TlsOptions {
  std::string ca_file;      // --tls-ca (default: the system store)
  std::string cert_file;    // --tls-cert
  std::string key_file;     // --tls-key
  std::string server_name;  // --tls-server-name (default: the URL's host)
  bool insecure = false;    // --insecure: no certificate verification
};

// An OpenSSL client context for rediss:// endpoints, shared by every
// connection. create() reads the CA, certificate and key files at once, so
// a bad file is a UsageError before any network traffic.
class TlsContext {
 public:
  [[nodiscard]] static std::shared_ptr<TlsContext> create(const TlsOptions& options);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  [[nodiscard]] SSL_CTX* get() const { return m_ctx; }
  [[nodiscard]] const TlsOptions& options() const { return m_options; }

 private:
  TlsContext(SSL_CTX* ctx, TlsOptions options) : m_ctx(ctx), m_options(std::move(options)) {}
  SSL_CTX* m_ctx;
  TlsOptions m_options;
};

// The text of OpenSSL's most recent error (and clears the queue).
[[nodiscard]] std::string tls_error_text();

}  // namespace redlock::redis
