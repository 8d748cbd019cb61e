#pragma once

// A table of text for a terminal, as status and history print one: a
// header and rows of cells, columns two blanks apart, each as wide as its
// widest cell, made to fit a terminal's width by cutting or leaving out
// the columns a caller names, in its order. Pure text, no I/O.

#include <cstddef>
#include <string>
#include <vector>

namespace redlock::cli {

using Cells = std::vector<std::string>;

// One step of fitting a table into a width: cut column `column` down to
// `min` characters (its longer values then end with "…"), or, with `min`
// 0, leave the column out.
struct FitStep {
  size_t column = 0;
  size_t min = 0;
};

// The columns of a table as shown: each one's width in characters, 0 for
// a column left out (a column shown is never 0 wide: its header has a
// name).
struct ColumnWidths {
  std::vector<size_t> width;  // 0: left out
};

// The widths of the columns of `rows` (every row as many cells as the
// first, the header): each as wide as its widest cell; when `fit` is not 0
// and the table is wider, `steps` are taken in order until it fits. A step
// never widens a column, never cuts one below its header, and the last
// column shown is never left out. The table may still be wider than `fit`
// when the steps run out.
[[nodiscard]] ColumnWidths column_widths(const std::vector<Cells>& rows, size_t fit, const std::vector<FitStep>& steps);

// How many columns a row laid out in `widths` takes at most.
[[nodiscard]] size_t table_width(const ColumnWidths& widths);

// One row laid out in `widths`: each cell padded to its column (cut to it
// with "…" when longer), the columns left out skipped, two blanks between
// columns, no trailing blank, and a newline.
[[nodiscard]] std::string table_line(const Cells& cells, const ColumnWidths& widths);

}  // namespace redlock::cli
