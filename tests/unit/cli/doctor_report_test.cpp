// doctor's report for people: each server named once, a line per check,
// wrapped at blanks to a terminal's width under its column, whole in a pipe.

#include "cli/show/doctor_report.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "lines.hpp"
#include "util/text.hpp"

namespace redlock::cli {
namespace {

using redlock::test::lines_of;

using doctor::Finding;
using doctor::Level;

const std::string k_server = "redis://127.0.0.1:23456";

std::vector<Finding> one_server() {
  return {
      {"reach", Level::k_ok, k_server, "answered in 0.05ms", ""},
      {"persistence", Level::k_warn, k_server, "no persistence: a restart forgets every lock",
       "set appendonly yes and appendfsync always, or keep a restarted server out for longer than the longest TTL "
       "(30s here)"},
      {"clients", Level::k_ok, k_server,
       "1 of maxclients 10000 connected: room for 9999 more (an exec that holds a lock keeps two, a waiter three)", ""},
      {"independence", Level::k_ok, "", "one server: nothing to compare", ""},
  };
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(DoctorReport, OneServerIsNamedOnceAboveItsChecks) {
  const std::string report = doctor_text(one_server());
  EXPECT_EQ(report,
            "server redis://127.0.0.1:23456\n"
            "ok    reach         answered in 0.05ms\n"
            "warn  persistence   no persistence: a restart forgets every lock; set appendonly yes and appendfsync "
            "always, or keep a restarted server out for longer than the longest TTL (30s here)\n"
            "ok    clients       1 of maxclients 10000 connected: room for 9999 more (an exec that holds a lock keeps "
            "two, a waiter three)\n"
            "ok    independence  one server: nothing to compare\n")
      << "a pipe: a check a line, whole";
}

TEST(DoctorReport, OnATerminalEveryLineFitsAndTheTextWrapsUnderItsColumn) {
  for (const size_t width : {80U, 60U}) {
    SCOPED_TRACE(width);
    const std::string report = doctor_text(one_server(), width);
    EXPECT_EQ(count(report, k_server), 1U) << report;
    const std::vector<std::string> lines = lines_of(report);
    for (const auto& line : lines) {
      EXPECT_LE(text_columns(line), width) << line;
    }
    // Every word is still there, in order, a continuation under the text's column.
    std::string words;
    for (size_t i = 1; i < lines.size(); ++i) {
      const bool continued = lines[i].rfind(std::string(20, ' '), 0) == 0;
      EXPECT_TRUE(continued || lines[i].rfind("ok    ", 0) == 0 || lines[i].rfind("warn  ", 0) == 0) << lines[i];
      std::istringstream in(lines[i]);
      for (std::string word; in >> word;) {
        words += " " + word;
      }
    }
    EXPECT_NE(words.find("persistence no persistence: a restart forgets every lock; set appendonly yes and "
                         "appendfsync always, or keep a restarted server out for longer than the longest TTL (30s "
                         "here) ok clients"),
              std::string::npos)
        << report;
  }
  EXPECT_EQ(lines_of(doctor_text(one_server(), 80)).at(3),
            "                    yes and appendfsync always, or keep a restarted server out");
}

TEST(DoctorReport, SeveralServersHaveAHeaderEachAndTheSetItsOwn) {
  std::vector<Finding> findings = {
      {"reach", Level::k_ok, "redis://a:6379", "answered in 0.1ms", ""},
      {"reach", Level::k_fail, "redis://b:6379", "connection refused", "start it"},
      {"independence", Level::k_ok, "", "2 independent masters", ""},
  };
  EXPECT_EQ(doctor_text(findings, 80),
            "server redis://a:6379\n"
            "ok    reach         answered in 0.1ms\n"
            "\n"
            "server redis://b:6379\n"
            "fail  reach         connection refused; start it\n"
            "\n"
            "all servers\n"
            "ok    independence  2 independent masters\n");
}

TEST(DoctorReport, WhatAServerSaysCannotDriveTheTerminal) {
  const std::vector<Finding> findings = {{"version", Level::k_warn, "redis://h:1", "Redis \x1b[2J5.0", ""}};
  const std::string report = doctor_text(findings, 80);
  EXPECT_EQ(report.find('\x1b'), std::string::npos) << report;
}

}  // namespace
}  // namespace redlock::cli
