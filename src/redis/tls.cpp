#include "redis/tls.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <poll.h>

#include "redis/failure.hpp"
#include "redis/openssl.hpp"
#include "redis/transport.hpp"
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

namespace {

// What to do about a TLS failure whose cause is this client's certificate.
std::string client_certificate_hint(const std::string& why) {
  if (why.find("certificate required") != std::string::npos) {
    return " (the server asks for a client certificate: give one with --tls-cert and --tls-key)";
  }
  if (why.find("unknown ca") != std::string::npos || why.find("bad certificate") != std::string::npos ||
      why.find("certificate unknown") != std::string::npos) {
    return " (the server does not accept this client certificate: see --tls-cert and --tls-key)";
  }
  return "";
}

// TLS failures that mean "we were refused" (77), not "unreachable" (69).
bool is_refusal(unsigned long e) {
  int reason = ERR_GET_REASON(e);
  return reason == SSL_R_CERTIFICATE_VERIFY_FAILED || reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED ||
         reason == SSL_R_SSLV3_ALERT_BAD_CERTIFICATE || reason == SSL_R_TLSV1_ALERT_UNKNOWN_CA ||
         reason == SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN || reason == SSL_R_TLSV1_ALERT_ACCESS_DENIED ||
         reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE;
}

// The transport of rediss:// endpoints: OpenSSL over the socket, driven by
// the same poll loop as plain sockets (what OpenSSL waits for is
// wanted_events()).
class TlsTransport final : public Transport {
 public:
  TlsTransport(int fd, const TlsContext& tls, const std::string& host, std::string where)
      : m_ssl(openssl().SSL_new(tls.get()), [](SSL* s) { openssl().SSL_free(s); }), m_where(std::move(where)) {
    const OpenSsl& ssl = openssl();
    ssl.SSL_set_fd(m_ssl.get(), fd);
    const std::string& name = tls.options().server_name.empty() ? host : tls.options().server_name;
    unsigned char ip[16];
    const bool is_ip = inet_pton(AF_INET, name.c_str(), ip) == 1 || inet_pton(AF_INET6, name.c_str(), ip) == 1;
    if (!is_ip) {
      (void)ssl.SSL_ctrl(m_ssl.get(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                         const_cast<char*>(name.c_str()));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    }
    if (!tls.options().insecure) {
      X509_VERIFY_PARAM* param = ssl.SSL_get0_param(m_ssl.get());
      if (is_ip) {
        ssl.X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
      } else {
        ssl.X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
      }
    }
  }

  Handshake handshake(Failure& failure) override {
    const OpenSsl& ssl = openssl();
    ssl.ERR_clear_error();
    int r = ssl.SSL_connect(m_ssl.get());
    if (r == 1) {
      m_want = 0;
      return Handshake::k_done;
    }
    int err = ssl.SSL_get_error(m_ssl.get(), r);
    if (err == SSL_ERROR_WANT_READ) {
      m_want = POLLIN;
      return Handshake::k_pending;
    }
    if (err == SSL_ERROR_WANT_WRITE) {
      m_want = POLLOUT;
      return Handshake::k_pending;
    }
    long verify = ssl.SSL_get_verify_result(m_ssl.get());
    if (verify != X509_V_OK) {
      failure = Failure{ExitStatus::k_refused, fmt::format("TLS verification of Redis at {} failed: {} (see --tls-ca, "
                                                           "--tls-server-name)",
                                                           m_where, ssl.X509_verify_cert_error_string(verify))};
      return Handshake::k_failed;
    }
    unsigned long e = ssl.ERR_peek_error();
    ExitStatus status = is_refusal(e) ? ExitStatus::k_refused : ExitStatus::k_unavailable;
    std::string why = err == SSL_ERROR_SYSCALL && e == 0 ? "the server closed the connection" : tls_error_text();
    failure = Failure{
        status, fmt::format("TLS handshake with Redis at {} failed: {}{}", m_where, why, client_certificate_hint(why))};
    return Handshake::k_failed;
  }

  ssize_t read(char* buf, size_t len, Failure& failure) override {
    const OpenSsl& ssl = openssl();
    ssl.ERR_clear_error();
    int n = ssl.SSL_read(m_ssl.get(), buf, static_cast<int>(len));
    if (n > 0) {
      m_want = 0;
      return n;
    }
    int err = ssl.SSL_get_error(m_ssl.get(), n);
    if (err == SSL_ERROR_WANT_READ) {
      return k_blocked;
    }
    if (err == SSL_ERROR_WANT_WRITE) {
      m_want = POLLOUT;
      return k_blocked;
    }
    if (err == SSL_ERROR_ZERO_RETURN || (err == SSL_ERROR_SYSCALL && ssl.ERR_peek_error() == 0)) {
      return k_closed;
    }
    unsigned long e = ssl.ERR_peek_error();
    const std::string why = tls_error_text();
    failure = Failure{is_refusal(e) ? ExitStatus::k_refused : ExitStatus::k_unavailable,
                      fmt::format("TLS error from Redis at {}: {}{}", m_where, why, client_certificate_hint(why))};
    return k_failed;
  }

  ssize_t write(const char* buf, size_t len, Failure& failure) override {
    const OpenSsl& ssl = openssl();
    ssl.ERR_clear_error();
    int n = ssl.SSL_write(m_ssl.get(), buf, static_cast<int>(len));
    if (n > 0) {
      return n;
    }
    int err = ssl.SSL_get_error(m_ssl.get(), n);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      return k_blocked;
    }
    // The server may have closed after an alert (e.g. TLS 1.3's "certificate
    // required", sent after the client's side of the handshake is done): read
    // it, so the failure names the real cause.
    unsigned long e = ssl.ERR_peek_error();
    if (e == 0) {
      char scratch[256];
      ssl.ERR_clear_error();
      (void)ssl.SSL_read(m_ssl.get(), scratch, sizeof(scratch));
      e = ssl.ERR_peek_error();
    }
    std::string why = e == 0 ? std::string("the server closed the connection") : tls_error_text();
    failure =
        Failure{is_refusal(e) ? ExitStatus::k_refused : ExitStatus::k_unavailable,
                fmt::format("TLS error talking to Redis at {}: {}{}", m_where, why, client_certificate_hint(why))};
    return k_failed;
  }

  short wanted_events() const override { return m_want; }
  bool may_hold_more() const override { return true; }
  bool said_goodbye() const override { return false; }

 private:
  std::unique_ptr<SSL, void (*)(SSL*)> m_ssl;
  short m_want = 0;  // what OpenSSL waits for (handshake, or a read that must write)
  std::string m_where;
};

}  // namespace

std::unique_ptr<Transport> tls_transport(int fd, const TlsContext& tls, const std::string& host, std::string where) {
  return std::make_unique<TlsTransport>(fd, tls, host, std::move(where));
}

}  // namespace redlock::redis
