// The text table that status and history fit to a terminal: columns as wide
// as their widest cell, cut or left out only as the steps say, in order.

#include "cli/show/table.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace redlock::cli {
namespace {

const std::vector<Cells> k_rows = {
    {"NAME", "STATE", "COMMAND"},
    {"a-rather-long-lock-name", "held", "./deploy.sh --env production"},
    {"short", "free", "-"},
};

std::string render(const std::vector<Cells>& rows, const ColumnWidths& widths) {
  std::string out;
  for (const auto& row : rows) {
    out += table_line(row, widths);
  }
  return out;
}

TEST(Table, ColumnsAreAsWideAsTheirWidestCellTwoBlanksApartWithoutTrailingBlanks) {
  const ColumnWidths widths = column_widths(k_rows, 0, {{0, 4}});
  EXPECT_EQ(widths.width, (std::vector<size_t>{23, 5, 28}));
  EXPECT_EQ(table_width(widths), 23U + 5 + 28 + 4);
  EXPECT_EQ(render(k_rows, widths),
            "NAME                     STATE  COMMAND\n"
            "a-rather-long-lock-name  held   ./deploy.sh --env production\n"
            "short                    free   -\n")
      << "no width: the steps are not taken";
}

TEST(Table, StepsAreTakenInOrderOnlyAsFarAsNeeded) {
  const std::vector<FitStep> steps = {{0, 10}, {2, 1}, {2, 0}};
  // 60 columns: the table fits as it is.
  EXPECT_EQ(column_widths(k_rows, 60, steps).width, (std::vector<size_t>{23, 5, 28}));
  // 50: NAME is cut by the 10 it is over, no further.
  EXPECT_EQ(column_widths(k_rows, 50, steps).width, (std::vector<size_t>{13, 5, 28}));
  // 40: NAME to its 10, then COMMAND.
  const ColumnWidths forty = column_widths(k_rows, 40, steps);
  EXPECT_EQ(forty.width, (std::vector<size_t>{10, 5, 21}));
  EXPECT_EQ(render(k_rows, forty),
            "NAME        STATE  COMMAND\n"
            "a-rather-\xe2\x80\xa6  held   ./deploy.sh --env pr\xe2\x80\xa6\n"
            "short       free   -\n");
  // 20: COMMAND is cut to its header, then left out.
  EXPECT_EQ(column_widths(k_rows, 20, steps).width, (std::vector<size_t>{10, 5, 0}));
  EXPECT_EQ(render(k_rows, column_widths(k_rows, 20, steps)),
            "NAME        STATE\n"
            "a-rather-\xe2\x80\xa6  held\n"
            "short       free\n");
}

TEST(Table, AColumnIsNeverCutBelowItsHeaderAndTheLastOneShownStays) {
  const std::vector<Cells> rows = {{"NAME", "STATE"}, {"deploy-the-whole-fleet", "held"}};
  EXPECT_EQ(column_widths(rows, 5, {{0, 1}, {1, 0}, {0, 0}}).width, (std::vector<size_t>{4, 0}))
      << "NAME to its header, then STATE left out";
  EXPECT_EQ(column_widths(rows, 3, {{1, 0}, {0, 0}}).width, (std::vector<size_t>{22, 0}))
      << "NAME, the last column shown, stays: the steps ran out";
}

TEST(Table, WidthsCountCharactersNotBytes) {
  const std::vector<Cells> rows = {{"NAME", "X"}, {"d\xc3\xa9ploiement", "1"}};
  EXPECT_EQ(column_widths(rows, 0, {}).width, (std::vector<size_t>{11, 1}));
  EXPECT_EQ(table_line(rows[1], column_widths(rows, 0, {})), "d\xc3\xa9ploiement  1\n");
  EXPECT_EQ(table_line(rows[0], column_widths(rows, 0, {})), "NAME         X\n");
}

}  // namespace
}  // namespace redlock::cli
