#pragma once

// Standard output that a stop signal can interrupt, and its size when it
// is a terminal.

#include <cstddef>
#include <string_view>

#include "util/cancel.hpp"
#include "util/exit_status.hpp"
#include "util/fd.hpp"

namespace redlock {

// A write to a pipe or a terminal that nobody reads (`status --watch |
// less`, with less not reading) blocks, and a blocked write would keep the
// stop signals waiting until the reader goes. So when standard output is a
// pipe, a FIFO or a terminal, this writes through a description of its own
// opened non-blocking (the flag is the description's: one shared with the
// shell must not change), and polls the stop request beside it; a socket is
// written with MSG_DONTWAIT. Anything else (a file) takes a plain write.
// What a listing ends with when its reader went away (`status | head -1`,
// a write that failed with EPIPE): quietly, as ls(1) ends, by SIGPIPE, or
// with 0 when redlock was started with SIGPIPE ignored.
[[nodiscard]] ExitCode reader_gone();

// What standard output is: a terminal of `columns` by `rows` (COLUMNS and
// LINES when set, as ps(1) reads them, else the terminal's own size, else
// 80 by 24), or not a terminal (0 by 0).
struct Screen {
  size_t columns = 0;
  size_t rows = 0;
};
[[nodiscard]] Screen stdout_screen();

class StoppableStdout {
 public:
  StoppableStdout();
  StoppableStdout(const StoppableStdout&) = delete;
  StoppableStdout& operator=(const StoppableStdout&) = delete;

  enum class Outcome { k_written, k_failed, k_stopped };
  // Writes all of `text`, unless the write fails (a closed pipe, a full
  // disk) or `stop` comes first.
  [[nodiscard]] Outcome write(std::string_view text, const Cancel& stop);

 private:
  Fd m_own;  // the non-blocking description, when one was opened
  int m_fd = 1;
  bool m_socket = false;
};

}  // namespace redlock
