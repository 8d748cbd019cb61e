#pragma once

#include <string>

#include "util/exit_status.hpp"

namespace redlock::redis {

// Why a server gave no usable answer: the exit status it maps to and a line
// for people (never containing a password). A header of its own, so that
// what only judges answers (lock/quorum, lock/answers) needs no socket.
struct Failure {
  ExitStatus status = ExitStatus::k_unavailable;
  std::string message;
  bool answered = false;  // an error reply: the server is there
};

}  // namespace redlock::redis
