// Lock names (1 to 512 bytes of UTF-8, no control characters, no braces) and the
// escaping that keeps names and commands from driving the terminal.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "util/exit_status.hpp"
#include "util/text.hpp"

using redlock::escape_for_terminal;
using redlock::is_valid_utf8;
using redlock::k_max_name_bytes;
using redlock::UsageError;
using redlock::validate_name;

namespace {

std::string rejection(const std::string& name) {
  try {
    validate_name(name);
    ADD_FAILURE() << "accepted '" << escape_for_terminal(name) << "'";
  } catch (const UsageError& e) {
    return e.what();
  }
  return {};
}

bool has_terminal_control(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      return true;
    }
    // C1 controls, U+0080..U+009F, are "\xc2\x80".."\xc2\x9f" in UTF-8.
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xa0) {
      return true;
    }
  }
  return false;
}

// `cp` in UTF-8.
std::string utf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return out;
}

}  // namespace

TEST(ValidateName, AcceptsOrdinaryNames) {
  for (const char* name :
       {"a", "deploy", "nightly-report", "db/migrate:v2", "with space", "*", "💡 idea", "ünïcødé", "日本語"}) {
    SCOPED_TRACE(name);
    EXPECT_NO_THROW(validate_name(name));
  }
}

TEST(ValidateName, AcceptsBracesAnywhere) {
  // A leading '}' was refused: it left the keys without a hash tag. The
  // tag now holds the name's braces as other bytes (lock/keys.hpp).
  for (const char* name : {"{x}", "a{b}c", "b}{c", "{", "x{", "x}", "ünï}", "job{1}", "{}", "}", "}x", "}{x}"}) {
    SCOPED_TRACE(name);
    EXPECT_NO_THROW(validate_name(name));
  }
}

TEST(ValidateName, RejectsAnEmptyName) {
  std::string msg = rejection("");
  EXPECT_NE(msg.find("empty"), std::string::npos) << msg;
}

TEST(ValidateName, Accepts512BytesButNot513) {
  EXPECT_EQ(k_max_name_bytes, 512u);
  EXPECT_NO_THROW(validate_name(std::string(512, 'n')));
  std::string msg = rejection(std::string(513, 'n'));
  EXPECT_NE(msg.find("513"), std::string::npos) << msg;
}

TEST(ValidateName, CountsBytesNotCharacters) {
  // 170 three-byte characters are 510 bytes; 171 are 513.
  std::string euro = "\xe2\x82\xac";
  std::string ok;
  std::string too_long;
  for (int i = 0; i < 170; ++i) {
    ok += euro;
  }
  too_long = ok + euro;
  EXPECT_NO_THROW(validate_name(ok));
  rejection(too_long);
}

TEST(ValidateName, RejectsEveryAsciiControlCharacter) {
  for (int c = 0; c < 0x20; ++c) {
    SCOPED_TRACE(c);
    rejection(std::string("a") + static_cast<char>(c) + "b");
  }
  rejection("del\x7f");
  rejection("\x1b[2J");
}

TEST(ValidateName, RejectsC1ControlCharacters) {
  // U+0085 (NEL) and U+009B (CSI) are control characters as much as \n and ESC.
  rejection(
      "a\xc2\x85"
      "b");
  rejection(
      "\xc2\x9b"
      "2J");
  EXPECT_NO_THROW(validate_name("\xc2\xa0"));  // U+00A0, a no-break space, is printable
}

TEST(ValidateName, RejectsInvalidUtf8) {
  for (const std::string& name :
       std::vector<std::string>{"\xff", "a\x80", "\xc0\xaf",     // stray byte, lone continuation, overlong '/'
                                "\xe0\x80\xaf",                  // overlong three-byte '/'
                                "\xed\xa0\x80",                  // a UTF-16 surrogate
                                "\xf4\x90\x80\x80",              // above U+10FFFF
                                "\xe2\x82", "x\xf0\x9f\x92"}) {  // truncated sequences
    SCOPED_TRACE(escape_for_terminal(name));
    std::string msg = rejection(name);
    EXPECT_NE(msg.find("UTF-8"), std::string::npos) << msg;
  }
}

TEST(ValidateName, ShowsARejectedNameOnlyEscaped) {
  std::string msg = rejection("evil\x1b]0;pwned\x07");
  EXPECT_FALSE(has_terminal_control(msg)) << escape_for_terminal(msg);
  EXPECT_NE(msg.find("\\x1b"), std::string::npos) << msg;
}

TEST(IsValidUtf8, AcceptsWellFormedText) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain"));
  EXPECT_TRUE(is_valid_utf8("\xc2\xa9 \xe2\x82\xac \xf0\x9f\x92\xa1 \xf4\x8f\xbf\xbf"));
}

TEST(IsValidUtf8, RejectsMalformedText) {
  EXPECT_FALSE(is_valid_utf8("\xc1\xbf"));
  EXPECT_FALSE(is_valid_utf8("\xf0\x80\x80\xaf"));
  EXPECT_FALSE(is_valid_utf8("\xed\xbf\xbf"));
  EXPECT_FALSE(is_valid_utf8("\xf8\x88\x80\x80\x80"));
  EXPECT_FALSE(is_valid_utf8("ok\xe2\x28\xa1"));
}

TEST(EscapeForTerminal, LeavesPrintableTextAlone) {
  EXPECT_EQ(escape_for_terminal("deploy db/1 {x} ~!"), "deploy db/1 {x} ~!");
  EXPECT_EQ(escape_for_terminal("ünïcødé 💡"), "ünïcødé 💡");
  EXPECT_EQ(escape_for_terminal(""), "");
}

TEST(EscapeForTerminal, NamesCommonControlCharacters) {
  EXPECT_EQ(escape_for_terminal("a\nb"), "a\\nb");
  EXPECT_EQ(escape_for_terminal("a\tb"), "a\\tb");
  EXPECT_EQ(escape_for_terminal("a\rb"), "a\\rb");
}

TEST(EscapeForTerminal, WritesOtherControlsAsHex) {
  EXPECT_EQ(escape_for_terminal("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(escape_for_terminal(std::string("\0x", 2)), "\\x00x");
  EXPECT_EQ(escape_for_terminal("\x7f"), "\\x7f");
  EXPECT_EQ(escape_for_terminal("\x07"), "\\x07");
}

TEST(EscapeForTerminal, WritesInvalidBytesAsHex) {
  EXPECT_EQ(escape_for_terminal("a\xff"
                                "b"),
            "a\\xffb");
  EXPECT_EQ(escape_for_terminal("\xc0\xaf"), "\\xc0\\xaf");
}

TEST(EscapeForTerminal, EscapesC1Controls) {
  EXPECT_EQ(escape_for_terminal("\xc2\x9b"
                                "2J"),
            "\\u009b2J");
  EXPECT_EQ(escape_for_terminal("\xc2\x85"), "\\u0085");
  EXPECT_EQ(escape_for_terminal("\xc2\xa0"), "\xc2\xa0");
}

TEST(EscapeForTerminal, ShowsFormatCharactersAndSeparatorsByNumber) {
  // U+202E turned the rest of a status row around; "deploy" and
  // "deploy" + U+200B looked like one lock; U+2028 ended a line.
  EXPECT_EQ(escape_for_terminal("ab" + utf8(0x202e) + "cd"), "ab\\u202ecd");
  EXPECT_EQ(escape_for_terminal("deploy" + utf8(0x200b)), "deploy\\u200b");
  EXPECT_NE(escape_for_terminal("deploy" + utf8(0x200b)), escape_for_terminal("deploy"));
  EXPECT_EQ(escape_for_terminal("a" + utf8(0x2028) + "b" + utf8(0x2029)), "a\\u2028b\\u2029");
  EXPECT_EQ(escape_for_terminal(utf8(0xfeff) + "x" + utf8(0x00ad)), "\\ufeffx\\u00ad");
  EXPECT_EQ(escape_for_terminal(utf8(0xe0041)), "\\U000e0041");  // a tag character
  EXPECT_EQ(escape_for_terminal(utf8(0x1343f)), "\\U0001343f");  // new in Unicode 15
  // Log lines are escaped once more, keeping backslashes: the same escapes.
  EXPECT_EQ(redlock::escape_controls("a\\b" + utf8(0x2066)), "a\\b\\u2066");
}

TEST(EscapeForTerminal, EscapesEveryFormatCharacterAndSeparatorOfUnicode15AndNothingBeside) {
  // General categories Cf, Zl and Zp (Unicode 15.0): every range, and the
  // characters on either side of it, which are shown as they are.
  struct Range {
    char32_t first, last;
  };
  const std::vector<Range> ranges = {
      {0x00ad, 0x00ad},   {0x0600, 0x0605},   {0x061c, 0x061c},   {0x06dd, 0x06dd},   {0x070f, 0x070f},
      {0x0890, 0x0891},   {0x08e2, 0x08e2},   {0x180e, 0x180e},   {0x200b, 0x200f},   {0x2028, 0x202e},
      {0x2060, 0x2064},   {0x2066, 0x206f},   {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0x110bd, 0x110bd},
      {0x110cd, 0x110cd}, {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001},
      {0xe0020, 0xe007f},
  };
  const auto shown_raw = [](char32_t cp) { return escape_for_terminal(utf8(cp)) == utf8(cp); };
  size_t escaped = 0;
  for (const auto& r : ranges) {
    for (char32_t cp = r.first; cp <= r.last; ++cp) {
      EXPECT_FALSE(shown_raw(cp)) << std::hex << static_cast<unsigned>(cp);
      ++escaped;
    }
    EXPECT_TRUE(shown_raw(r.first - 1)) << std::hex << static_cast<unsigned>(r.first - 1);
    EXPECT_TRUE(shown_raw(r.last + 1)) << std::hex << static_cast<unsigned>(r.last + 1);
  }
  EXPECT_EQ(escaped, 172u);
}

TEST(EscapeForTerminal, DoublesBackslashesSoEscapesCannotBeForged) {
  EXPECT_EQ(escape_for_terminal("a\\nb"), "a\\\\nb");
  EXPECT_NE(escape_for_terminal("\\n"), escape_for_terminal("\n"));
  EXPECT_NE(escape_for_terminal("\\x1b"), escape_for_terminal("\x1b"));
}

TEST(EscapeCommand, KeepsBackslashesAsTypedAndEscapesTheRest) {
  EXPECT_EQ(redlock::escape_command("printf 'a\\n' C:\\dir"), "printf 'a\\n' C:\\dir");
  EXPECT_EQ(redlock::escape_command("x\x1b[2J\ny" + utf8(0x202e) + "\xff"), "x\\x1b[2J\\ny\\u202e\\xff");
}

TEST(EscapeForTerminal, NeverLetsAControlCharacterThrough) {
  // Every single byte, every byte after a lead byte, and every two-byte sequence.
  for (int a = 0; a < 256; ++a) {
    std::string one(1, static_cast<char>(a));
    EXPECT_FALSE(has_terminal_control(escape_for_terminal(one))) << a;
    for (int b = 0; b < 256; ++b) {
      std::string two{static_cast<char>(a), static_cast<char>(b)};
      std::string out = escape_for_terminal(two);
      ASSERT_FALSE(has_terminal_control(out)) << a << " " << b;
    }
  }
}

TEST(EscapeForTerminal, KeepsDistinctInputsDistinct) {
  std::vector<std::string> inputs = {"\n",      "\\n", "\\\n", "\x1b", "\\x1b", "\xff",       "\\xff",  "\xc2\x9b",
                                     "\\u009b", "\t",  "\\t",  "a",    "\\",    utf8(0x202e), "\\u202e"};
  std::set<std::string> outputs;
  for (const auto& in : inputs) {
    outputs.insert(escape_for_terminal(in));
  }
  EXPECT_EQ(outputs.size(), inputs.size());
}

TEST(SpokenList, ReadsAsASentenceAndStopsAfterAFew) {
  using redlock::spoken_list;
  EXPECT_EQ(spoken_list({"a"}), "a");
  EXPECT_EQ(spoken_list({"a", "b"}), "a and b");
  EXPECT_EQ(spoken_list({"a", "b", "c"}), "a, b and c");
  EXPECT_EQ(spoken_list({"a", "b", "c", "d", "e"}), "a, b, c, d and e");
  EXPECT_EQ(spoken_list({"a", "b", "c", "d", "e", "f", "g"}), "a, b, c, d, e and 2 more");
  EXPECT_EQ(spoken_list({"a", "b", "c"}, 2), "a, b and 1 more");
}

TEST(TextColumns, CountsCharactersNotBytes) {
  EXPECT_EQ(redlock::text_columns(""), 0U);
  EXPECT_EQ(redlock::text_columns("deploy"), 6U);
  EXPECT_EQ(redlock::text_columns("d\xc3\xa9ploy\xe2\x80\xa6"), 7U);
}

TEST(FitColumns, CutsToTheWidthWithAnEllipsisAndNeverHalfACharacter) {
  EXPECT_EQ(redlock::fit_columns("abcdef", 0), "abcdef");
  EXPECT_EQ(redlock::fit_columns("abcdef", 6), "abcdef");
  EXPECT_EQ(redlock::fit_columns("abcdef", 4), "abc\xe2\x80\xa6");
  EXPECT_EQ(redlock::fit_columns("\xc3\xa9t\xc3\xa9 long", 4), "\xc3\xa9t\xc3\xa9\xe2\x80\xa6");
  EXPECT_EQ(redlock::text_columns(redlock::fit_columns(std::string(100, 'x'), 12)), 12U);
}

TEST(WrapWords, BreaksAtBlanksUnderTheIndentAndKeepsALongWordWhole) {
  EXPECT_EQ(redlock::wrap_words("one two three four", 9, ""), "one two\nthree\nfour\n");
  EXPECT_EQ(redlock::wrap_words("one two three four", 10, "  "), "one two\n  three\n  four\n");
  EXPECT_EQ(redlock::wrap_words("a verylongword b", 5, ""), "a\nverylongword\nb\n");
  EXPECT_EQ(redlock::wrap_words("one two", 0, "  "), "one two\n") << "0: one line";
  for (const size_t width : {20U, 33U, 60U}) {
    const std::string text =
        "no persistence: a restart forgets every lock; set appendonly yes and appendfsync always, or keep a "
        "restarted server out for longer than the longest TTL (30s here)";
    const std::string wrapped = redlock::wrap_words(text, width, "    ");
    size_t at = 0;
    std::string words;
    while (at < wrapped.size()) {
      const size_t end = wrapped.find('\n', at);
      const std::string line = wrapped.substr(at, end - at);
      EXPECT_LE(line.size(), width) << line;
      words += (words.empty() ? "" : " ") + line.substr(line.find_first_not_of(' '));
      at = end + 1;
    }
    EXPECT_EQ(words, text) << "every word kept, in order";
  }
}
