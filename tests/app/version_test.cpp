// The renderer library links and reports the project's version.
#include <adjoint/app/version.h>
#include <gtest/gtest.h>
#include <string>

TEST(App, VersionIsTheProjects) { EXPECT_EQ(std::string(adjoint::app::version()), "0.1.0"); }
