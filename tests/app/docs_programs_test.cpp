// app/docs/programs.md names every option that adjoint-optimize's and adjoint-render's --help print.
#include "app/help_options.h"

#include <gtest/gtest.h>

namespace adjoint::docs_test {
namespace {

void expect_documented(const std::string& program, size_t at_least) {
    int status = -1;
    const std::string help = help_text(std::string(ADJOINT_BINARY_DIR) + "/app/" + program, &status);
    ASSERT_EQ(status, 0) << help;
    const std::vector<std::string> options = help_options(help);
    EXPECT_GE(options.size(), at_least) << help;
    const std::string section = program_section(programs_doc(), program);
    ASSERT_FALSE(section.empty()) << "programs.md has no section \"## " << program << "\"";
    for (const std::string& option : options)
        EXPECT_NE(section.find("`" + option + "`"), std::string::npos)
            << program << " " << option << " is not in its section of app/docs/programs.md";
}

TEST(DocsPrograms, EveryOptimizeOptionIsDocumented) { expect_documented("adjoint-optimize", 10); }

TEST(DocsPrograms, EveryRenderOptionIsDocumented) { expect_documented("adjoint-render", 8); }

// The parser the two tests rely on: CLI11's lines, a short and a long name, a heading and a description skipped.
TEST(DocsPrograms, HelpOptionsAreReadFromCli11Lines) {
    const std::string help = "Renders.\nUsage: x [OPTIONS]\n\nOptions:\n  -h,--help   Print\n  --out TEXT REQUIRED  the PNG\n"
                             "                 continued -- text\nTest hooks:\n  --test-size WxH  size\n";
    EXPECT_EQ(help_options(help), (std::vector<std::string>{"-h", "--help", "--out", "--test-size"}));
    EXPECT_EQ(program_section("# t\n## a\nx `--out`\n## b\ny\n", "a"), "\n## a\nx `--out`");
}

} // namespace
} // namespace adjoint::docs_test
