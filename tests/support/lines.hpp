// Text cut into lines, for the renderers' tests.
#pragma once

#include <string>
#include <vector>

namespace redlock::test {

// Every line of `text`, without its newline.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    out.push_back(text.substr(at, end - at));
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

}  // namespace redlock::test
