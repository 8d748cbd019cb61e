#include "cli/show/table.hpp"

#include <algorithm>

#include "util/text.hpp"

namespace redlock::cli {

namespace {

// Two blanks between columns.
constexpr size_t k_gap = 2;

}  // namespace

size_t table_width(const ColumnWidths& widths) {
  size_t total = 0;
  size_t shown = 0;
  for (const size_t w : widths.width) {
    if (w > 0) {
      total += w;
      ++shown;
    }
  }
  return total + (shown > 1 ? (shown - 1) * k_gap : 0);
}

ColumnWidths column_widths(const std::vector<Cells>& rows, size_t fit, const std::vector<FitStep>& steps) {
  ColumnWidths out;
  if (rows.empty()) {
    return out;
  }
  out.width.assign(rows.front().size(), 0);
  for (const Cells& row : rows) {
    for (size_t c = 0; c < row.size() && c < out.width.size(); ++c) {
      out.width[c] = std::max(out.width[c], text_columns(row[c]));
    }
  }
  if (fit == 0) {
    return out;
  }
  for (const FitStep& step : steps) {
    const size_t total = table_width(out);
    if (total <= fit) {
      break;
    }
    if (step.column >= out.width.size() || out.width[step.column] == 0) {
      continue;
    }
    size_t& w = out.width[step.column];
    if (step.min == 0) {
      const bool last = std::count_if(out.width.begin(), out.width.end(), [](size_t x) { return x > 0; }) == 1;
      if (!last) {
        w = 0;
      }
      continue;
    }
    const size_t floor = std::max(step.min, text_columns(rows.front()[step.column]));
    if (w > floor) {
      w = std::max(floor, w - std::min(w, total - fit));
    }
  }
  return out;
}

std::string table_line(const Cells& cells, const ColumnWidths& widths) {
  std::string line;
  bool first = true;
  for (size_t c = 0; c < cells.size() && c < widths.width.size(); ++c) {
    const size_t w = widths.width[c];
    if (w == 0) {
      continue;
    }
    line.append(first ? 0 : k_gap, ' ');
    first = false;
    const std::string shown = fit_columns(cells[c], w);
    line += shown;
    line.append(w - std::min(w, text_columns(shown)), ' ');
  }
  while (!line.empty() && line.back() == ' ') {
    line.pop_back();
  }
  return line + "\n";
}

}  // namespace redlock::cli
