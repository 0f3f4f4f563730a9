// `cpack -G DEB` on this build: the qmer and qmer-dev packages hold what `cmake --install` puts
// under /usr, their dependencies resolve on this Debian, and unpacked into a scratch root the
// binary runs, man renders its page, and a program builds against the header-only package.
#include <filesystem>
#include <string>

#include "install/install_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using qmer::test::install_test;

class deb_package : public install_test {
  protected:
    void SetUp() override {
        install_test::SetUp();
        if (run("command -v dpkg-deb && command -v dpkg-shlibdeps").exit_code != 0)
            GTEST_FAIL() << "dpkg-deb or dpkg-shlibdeps is missing (Debian's dpkg-dev, which "
                            "build-essential brings)";
        auto const r =
            run(quoted(QMER_CPACK) + " -G DEB --config " +
                quoted(std::string(QMER_BUILD_DIR) + "/CPackConfig.cmake") + " -B packages");
        ASSERT_EQ(r.exit_code, 0) << r.out;
        runtime_ = package("qmer_");
        dev_ = package("qmer-dev_");
        ASSERT_FALSE(runtime_.empty()) << r.out;
        ASSERT_FALSE(dev_.empty()) << r.out;
    }

    // The one package file whose name starts with `stem`, relative to the test folder.
    std::string package(std::string const& stem) const {
        std::string found;
        for (auto const& entry : fs::directory_iterator(dir() / "packages")) {
            std::string const name = entry.path().filename().string();
            if (name.starts_with(stem) && name.ends_with(".deb")) {
                EXPECT_TRUE(found.empty()) << found << " and " << name;
                found = "packages/" + name;
            }
        }
        return found;
    }

    std::string runtime_, dev_;
};

TEST_F(deb_package, holds_the_install_tree_under_usr) {
    auto const runtime = run("dpkg-deb -c " + runtime_ + " | awk '{ print $6 }'");
    ASSERT_EQ(runtime.exit_code, 0) << runtime.out;
    for (char const* file : {"./usr/bin/qmer\n", "./usr/share/man/man1/qmer.1.gz\n",
                             "./usr/share/bash-completion/completions/qmer\n"})
        EXPECT_NE(runtime.out.find(file), std::string::npos) << file << runtime.out;
    EXPECT_EQ(runtime.out.find("include/"), std::string::npos) << runtime.out;

    auto const dev = run("dpkg-deb -c " + dev_ + " | awk '{ print $6 }'");
    ASSERT_EQ(dev.exit_code, 0) << dev.out;
    for (char const* file : {"./usr/include/qmer/core/qf/expandable.hpp\n",
                             "./usr/share/cmake/qmer/qmerConfig.cmake\n",
                             "./usr/share/cmake/qmer/qmerTargets.cmake\n"})
        EXPECT_NE(dev.out.find(file), std::string::npos) << file << dev.out;
    EXPECT_EQ(dev.out.find("bin/"), std::string::npos) << dev.out;

    // dpkg-shlibdeps found the binary's libraries; the headers need only xxHash's.
    auto const depends = run("dpkg-deb -f " + runtime_ + " Depends");
    for (char const* library : {"libhts3", "libtbb12", "libstdc++6"})
        EXPECT_NE(depends.out.find(library), std::string::npos) << library << depends.out;
    EXPECT_EQ(run("dpkg-deb -f " + dev_ + " Architecture Depends").out,
              "Architecture: all\nDepends: libxxhash-dev\n");
}

TEST_F(deb_package, installs_on_this_debian) {
    // apt resolves both packages' dependencies against this system without installing anything.
    auto const plan = run("apt-get install -s ./" + runtime_ + " ./" + dev_);
    ASSERT_EQ(plan.exit_code, 0) << plan.out;
    EXPECT_NE(plan.out.find("Inst qmer "), std::string::npos) << plan.out;
    EXPECT_NE(plan.out.find("Inst qmer-dev "), std::string::npos) << plan.out;
}

TEST_F(deb_package, unpacked_the_binary_runs_and_the_core_package_builds) {
    ASSERT_EQ(run("dpkg -x " + runtime_ + " root && dpkg -x " + dev_ + " root").exit_code, 0);
    auto const version = run("root/usr/bin/qmer --version");
    EXPECT_EQ(version.exit_code, 0) << version.out;
    EXPECT_EQ(version.out, std::string("qmer ") + QMER_VERSION + "\n");
    auto const page = run("MANWIDTH=100 man -l root/usr/share/man/man1/qmer.1.gz");
    EXPECT_EQ(page.exit_code, 0) << page.out;
    EXPECT_NE(page.out.find("qmer query [OPTIONS] INDEX READS [READS2]"), std::string::npos)
        << page.out;
    auto const consumer =
        build_and_run_consumer("root/usr", "15 ACGTTGCATGCAAGTC ACGTTGCATGCAAGTC");
    ASSERT_EQ(consumer.exit_code, 0) << consumer.out;
    EXPECT_EQ(consumer.out, "ACGTTGCATGCAAGTC\t2\t2\n");
}

}  // namespace
