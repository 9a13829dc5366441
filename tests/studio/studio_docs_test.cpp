// app/docs/programs.md names every option (test hooks included) that adjoint-studio's --help prints.
#include "app/help_options.h"

#include <gtest/gtest.h>

namespace adjoint::docs_test {
namespace {

TEST(DocsPrograms, EveryStudioOptionIsDocumented) {
    int status = -1;
    const std::string help = help_text(ADJOINT_STUDIO_PATH, &status);   // --help needs no display
    ASSERT_EQ(status, 0) << help;
    const std::vector<std::string> options = help_options(help);
    EXPECT_GE(options.size(), 13u) << help;
    const std::string section = program_section(programs_doc(), "adjoint-studio");
    ASSERT_FALSE(section.empty()) << "programs.md has no section \"## adjoint-studio\"";
    for (const std::string& option : options)
        EXPECT_NE(section.find("`" + option + "`"), std::string::npos)
            << "adjoint-studio " << option << " is not in its section of app/docs/programs.md";
}

} // namespace
} // namespace adjoint::docs_test
