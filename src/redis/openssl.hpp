#pragma once

// OpenSSL for rediss:// endpoints, loaded when the first one needs it
// (dlopen of libssl.so.3), not linked in: a call that speaks plain Redis
// (most of them) neither maps OpenSSL nor pays for its start-up, and TLS
// gets the system's OpenSSL with its security updates. The headers give the
// types and constants; the functions come from the table below.

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

namespace redlock::redis {

struct OpenSsl {
  // libssl
  decltype(&::TLS_client_method) TLS_client_method;
  decltype(&::SSL_CTX_new) SSL_CTX_new;
  decltype(&::SSL_CTX_free) SSL_CTX_free;
  decltype(&::SSL_CTX_ctrl) SSL_CTX_ctrl;
  decltype(&::SSL_CTX_set_verify) SSL_CTX_set_verify;
  decltype(&::SSL_CTX_set_default_verify_paths) SSL_CTX_set_default_verify_paths;
  decltype(&::SSL_CTX_load_verify_locations) SSL_CTX_load_verify_locations;
  decltype(&::SSL_CTX_use_certificate_chain_file) SSL_CTX_use_certificate_chain_file;
  decltype(&::SSL_CTX_use_PrivateKey_file) SSL_CTX_use_PrivateKey_file;
  decltype(&::SSL_CTX_check_private_key) SSL_CTX_check_private_key;
  decltype(&::SSL_new) SSL_new;
  decltype(&::SSL_free) SSL_free;
  decltype(&::SSL_ctrl) SSL_ctrl;
  decltype(&::SSL_set_fd) SSL_set_fd;
  decltype(&::SSL_get0_param) SSL_get0_param;
  decltype(&::SSL_connect) SSL_connect;
  decltype(&::SSL_read) SSL_read;
  decltype(&::SSL_write) SSL_write;
  decltype(&::SSL_get_error) SSL_get_error;
  decltype(&::SSL_get_verify_result) SSL_get_verify_result;
  // libcrypto (loaded with libssl)
  decltype(&::ERR_get_error) ERR_get_error;
  decltype(&::ERR_peek_error) ERR_peek_error;
  decltype(&::ERR_clear_error) ERR_clear_error;
  decltype(&::ERR_error_string_n) ERR_error_string_n;
  decltype(&::X509_verify_cert_error_string) X509_verify_cert_error_string;
  decltype(&::X509_VERIFY_PARAM_set1_host) X509_VERIFY_PARAM_set1_host;
  decltype(&::X509_VERIFY_PARAM_set1_ip_asc) X509_VERIFY_PARAM_set1_ip_asc;
};

// The table, loading OpenSSL on first use; an Error (69) saying what to
// install when it cannot be loaded.
[[nodiscard]] const OpenSsl& openssl();

}  // namespace redlock::redis
