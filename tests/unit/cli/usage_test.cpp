// What redlock says about a command line: help wrapped to 80 columns, the
// nearest word for "did you mean", and exec's line with the `--` it lacks.

#include "cli/line/usage.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace redlock::cli {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t end = std::min(text.find('\n', at), text.size());
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

TEST(WrapHelp, AnOptionsDescriptionGoesOnAtItsColumn) {
  const std::string entry = "  --jitter D" + std::string(18, ' ') +
                            "sleep a random time below D before the first try, so that a fleet's cron jobs do not "
                            "always start in the same order";
  const std::string wrapped = wrap_help(entry + "\n", 30);
  for (const auto& line : lines_of(wrapped)) {
    EXPECT_LE(line.size(), 80U) << line;
  }
  EXPECT_EQ(wrapped.substr(0, 30), "  --jitter D" + std::string(18, ' '));
  EXPECT_NE(wrapped.find("\n" + std::string(30, ' ') + "so that"), std::string::npos) << wrapped;
  EXPECT_EQ(wrapped.back(), '\n');
}

TEST(WrapHelp, PlainTextKeepsItsIndentationAndShortLinesStayAsTheyAre) {
  const std::string text = "  " + std::string(50, 'a') + " " + std::string(40, 'b') + "\nshort\n";
  EXPECT_EQ(wrap_help(text, 30), "  " + std::string(50, 'a') + "\n  " + std::string(40, 'b') + "\nshort\n");
  EXPECT_EQ(wrap_help(std::string(100, 'x'), 30), std::string(100, 'x')) << "a word longer than a line stays whole";
}

TEST(NearestWord, ATypoFindsTheOptionOrSubcommandMeant) {
  const std::vector<std::string> options = {"--ttl", "--wait", "--token", "--limit", "--hold-at-least", "-q"};
  EXPECT_EQ(nearest_word("--tll", options), "--ttl");
  EXPECT_EQ(nearest_word("--wiat", options), "--wait");
  EXPECT_EQ(nearest_word("--hold", options), "--hold-at-least") << "the one option it begins";
  EXPECT_EQ(nearest_word("--frobnicate", options), std::nullopt);
  const std::vector<std::string> subcommands = {"acquire", "release", "renew", "status", "break", "exec"};
  EXPECT_EQ(nearest_word("aquire", subcommands), "acquire");
  EXPECT_EQ(nearest_word("stauts", subcommands), "status");
  EXPECT_EQ(nearest_word("deploy", subcommands), std::nullopt);
}

TEST(WithDashes, TheCommandKeepsEveryWordAndQuotesWhatTheShellWouldSplit) {
  EXPECT_EQ(with_dashes({"exec", "job", "tar", "-czf", "x.tgz", "dir"}, 2), "redlock exec job -- tar -czf x.tgz dir");
  EXPECT_EQ(with_dashes({"exec", "--ttl", "5s", "job", "sh", "-c", "echo hi; it's"}, 4),
            "redlock exec --ttl 5s job -- sh -c 'echo hi; it'\"'\"'s'");
  EXPECT_EQ(with_dashes({"-r", "redis://:hunter2@h:6379", "exec", "job", "true"}, 4).find("hunter2"),
            std::string::npos);
}

TEST(QuietLevel, CountsEachQAndSilentIsTwo) {
  EXPECT_EQ(quiet_level("-q"), 1);
  EXPECT_EQ(quiet_level("-qq"), 2);
  EXPECT_EQ(quiet_level("--quiet"), 1);
  EXPECT_EQ(quiet_level("--silent"), 2);
  EXPECT_EQ(quiet_level("--ttl"), 0);
}

}  // namespace
}  // namespace redlock::cli
