// tests/man/man_pages_test.cc: installs the toolchain into a temporary prefix and checks its
// manual pages as a user meets them: `MANPATH=PREFIX/share/man man -w NAME` finds a page for
// every function bsp.h and bsp_level1.h declare, and that page shows the prototype exactly as
// the header has it; every page renders with groff's warnings on and none given; bsprun(1)
// lists every option `bsprun --help` prints (and its BSP_* variable); bspcc(1), bspprof(1),
// bsprun(1) and bsplib(3) exist.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/run_program.h"

namespace {

using bsp::testing::describe;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;
using namespace std::chrono_literals;

struct Declaration {
  std::string name;
  std::string prototype;  // whitespace collapsed, ending in ';'
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs of white space as one space, and none beside a '*': the header's layout
// (`const void* src`) and the pages' C style (`const void *src`) read as the same
// prototype.
std::string collapse_spaces(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool space = c == ' ' || c == '\t' || c == '\n';
    if (space && (out.empty() || out.back() == ' ' || out.back() == '*')) continue;
    if (c == '*' && !out.empty() && out.back() == ' ') out.pop_back();
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The functions a C header declares: comments and preprocessor lines dropped, then every
// statement with a bsp_ name followed by '(' (attributes cut off).
std::vector<Declaration> declared_functions(const std::string& header) {
  std::string text = std::regex_replace(read_file(header), std::regex(R"(/\*[\s\S]*?\*/)"), " ");
  std::string code;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] == '#') continue;
    code += line + "\n";
  }
  std::vector<Declaration> found;
  std::istringstream statements(code);
  static const std::regex name(R"(\b(bsp_\w+)\s*\()");
  for (std::string statement; std::getline(statements, statement, ';');) {
    for (const char* noise : {"extern \"C\" {", "}"}) {
      for (auto at = statement.find(noise); at != std::string::npos; at = statement.find(noise)) {
        statement.erase(at, std::string(noise).size());
      }
    }
    if (auto at = statement.find("__attribute__"); at != std::string::npos) statement.erase(at);
    std::smatch match;
    if (!std::regex_search(statement, match, name)) continue;
    found.push_back({match[1], collapse_spaces(statement) + ";"});
  }
  return found;
}

class ManPagesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (const char* tool : {"man", "groff"}) {
      ProgramResult found = run_program({"sh", "-c", "command -v \"$0\"", tool}, 10s);
      ASSERT_EQ(found.exit_code, 0) << tool << " is not installed (tools/setup.sh installs man-db and groff-base)";
    }
    const char* tmp = std::getenv("TEST_TMPDIR");
    prefix_ = std::string(tmp ? tmp : "/tmp") + "/bsp-man-install";
    ProgramResult installed = run_program({"tools/install.sh", prefix_}, 60s);
    ASSERT_EQ(installed.exit_code, 0) << describe(installed);
    manpath_ = prefix_ + "/share/man";
  }

  // `man -w name` with only this installation's pages: the file, or "".
  static std::string locate(const std::string& name) {
    ProgramResult found = run_program({"man", "-w", name}, 20s, "", {{"MANPATH", manpath_}});
    if (found.exit_code != 0) return "";
    std::string path = found.out.substr(0, found.out.find('\n'));
    return path.rfind(manpath_ + "/", 0) == 0 ? path : "";
  }

  // A page as plain text, rendered from the manual's root (so .so links resolve), with
  // every groff warning on: what groff says on stderr goes to warnings.
  static std::string render(const std::string& page, std::string& warnings) {
    std::string relative = page.substr(manpath_.size() + 1);
    ProgramResult text = run_program(
        {"sh", "-c", "cd \"$0\" && exec groff -man -Tascii -P-cbou -rLL=250n -rHY=0 -ww \"$1\"", manpath_, relative},
        30s);
    warnings = text.err;
    if (text.exit_code != 0) warnings += describe(text);
    return text.out;
  }

  static std::string prefix_;
  static std::string manpath_;
};

std::string ManPagesTest::prefix_;
std::string ManPagesTest::manpath_;

TEST_F(ManPagesTest, EveryDeclaredFunctionHasAPageShowingItsPrototype) {
  int checked = 0;
  for (const char* header : {"bsplib/bsp.h", "bsplib/bsp_level1.h"}) {
    std::vector<Declaration> functions = declared_functions(header);
    ASSERT_GT(functions.size(), 20u) << "could not parse " << header;
    for (const Declaration& function : functions) {
      std::string page = locate(function.name);
      if (page.empty()) {
        ADD_FAILURE() << "no manual page for " << function.name << " (declared in " << header << ") under " << manpath_;
        continue;
      }
      std::string warnings;
      std::string text = collapse_spaces(render(page, warnings));
      EXPECT_NE(text.find(function.prototype), std::string::npos)
          << page << " does not show " << header << "'s prototype: " << function.prototype;
      ++checked;
    }
  }
  EXPECT_GE(checked, 60);  // 26 calls of bsp.h, 40 of bsp_level1.h
}

TEST_F(ManPagesTest, ManFindsAndShowsPagesByName) {
  // The Oxford toolset's overview pages' names too: drma, bsmp, bsplib_level1.
  for (const char* name : {"bsp_put", "bsprun", "bspcc", "bspprof", "bsplib", "bsp", "bsp_level1", "bsp_pushregister",
                           "drma", "bsmp", "bsplib_level1"}) {
    EXPECT_NE(locate(name), "") << "MANPATH=" << manpath_ << " man -w " << name;
  }
  ProgramResult shown = run_program({"man", "bsp_put"}, 20s, "", {{"MANPATH", manpath_}, {"MANWIDTH", "100"}});
  EXPECT_EQ(shown.exit_code, 0) << describe(shown);
  EXPECT_NE(shown.out.find("bsp_put"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("SYNOPSIS"), std::string::npos) << shown.out;
}

TEST_F(ManPagesTest, EveryPageRendersWithoutWarnings) {
  int pages = 0;
  for (const auto& section : std::filesystem::directory_iterator(manpath_)) {
    for (const auto& file : std::filesystem::directory_iterator(section.path())) {
      std::string warnings;
      std::string text = render(file.path().string(), warnings);
      EXPECT_EQ(warnings, "") << file.path();
      for (const char* heading : {"NAME", "SYNOPSIS", "DESCRIPTION", "SEE ALSO"}) {
        EXPECT_NE(text.find(std::string("\n") + heading + "\n"), std::string::npos)
            << file.path() << " has no " << heading;
      }
      ++pages;
    }
  }
  EXPECT_GE(pages, 70);
}

TEST_F(ManPagesTest, BsprunPageListsEveryOptionOfHelp) {
  ProgramResult help = run_program({prefix_ + "/bin/bsprun", "--help"}, 10s);
  ASSERT_EQ(help.exit_code, 0) << describe(help);
  std::string page = locate("bsprun");
  ASSERT_NE(page, "");
  std::string warnings;
  std::string text = render(page, warnings);
  EXPECT_EQ(warnings, "");
  // Each option line of --help: "  SPELLING   help [layer; BSP_NAME; default ...]".
  static const std::regex option_name(R"((^|[ ,])(--?[a-z][a-z0-9-]*))");
  static const std::regex variable(R"(BSP_[A-Z0-9_]+)");
  int options = 0;
  std::istringstream lines(help.err);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  -", 0) != 0) continue;
    std::string spelling = line.substr(2, line.find("  ", 2) - 2);
    for (std::sregex_iterator it(spelling.begin(), spelling.end(), option_name), end; it != end; ++it) {
      std::string name = (*it)[2];
      std::regex whole("(^|[^a-z0-9-])" + name + "([^a-z0-9-]|$)");
      EXPECT_TRUE(std::regex_search(text, whole))
          << "bsprun(1) does not list " << name << " (bsprun --help: " << line << ")";
      ++options;
    }
    std::smatch env;
    if (std::regex_search(line, env, variable)) {
      EXPECT_NE(text.find(env[0]), std::string::npos) << "bsprun(1) does not name " << env[0];
    }
  }
  EXPECT_GE(options, 30) << help.err;
}

}  // namespace
