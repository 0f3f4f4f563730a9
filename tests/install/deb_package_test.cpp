// `cpack -G DEB` on this build: the qmer and qmer-dev packages hold what `cmake --install` puts
// under /usr (with the documentation Debian asks for), their description names every subcommand,
// their dependencies resolve on this Debian, and unpacked into a scratch root the
// binary runs, man renders its page, and a program builds against the header-only package.
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>

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
    for (char const* file :
         {"./usr/bin/qmer\n", "./usr/share/man/man1/qmer.1.gz\n",
          "./usr/share/bash-completion/completions/qmer\n", "./usr/share/doc/qmer/copyright\n",
          "./usr/share/doc/qmer/changelog.gz\n", "./usr/share/doc/qmer/README.md\n",
          "./usr/share/doc/qmer/examples/Snakefile\n",
          "./usr/share/doc/qmer/examples/config.yaml\n"})
        EXPECT_NE(runtime.out.find(file), std::string::npos) << file << runtime.out;
    EXPECT_EQ(runtime.out.find("include/"), std::string::npos) << runtime.out;

    auto const dev = run("dpkg-deb -c " + dev_ + " | awk '{ print $6 }'");
    ASSERT_EQ(dev.exit_code, 0) << dev.out;
    for (char const* file :
         {"./usr/include/qmer/core/qf/concurrent/expandable.hpp\n",
          "./usr/share/cmake/qmer/qmerConfig.cmake\n", "./usr/share/cmake/qmer/qmerTargets.cmake\n",
          "./usr/share/doc/qmer-dev/copyright\n", "./usr/share/doc/qmer-dev/changelog.gz\n"})
        EXPECT_NE(dev.out.find(file), std::string::npos) << file << dev.out;
    EXPECT_EQ(dev.out.find("bin/"), std::string::npos) << dev.out;

    // dpkg-shlibdeps found the binary's libraries; the headers need only xxHash's.
    auto const depends = run("dpkg-deb -f " + runtime_ + " Depends");
    for (char const* library :
         {"libhts3", "libtbb12", "libstdc++6", "libzstd1", "liblzma5", "libbz2-1.0"})
        EXPECT_NE(depends.out.find(library), std::string::npos) << library << depends.out;
    EXPECT_EQ(run("dpkg-deb -f " + dev_ + " Architecture Depends").out,
              "Architecture: all\nDepends: libxxhash-dev\n");
}

// What `apt show qmer` prints: a summary line and a description naming every subcommand that
// `qmer --help` lists, each as "qmer NAME".
TEST_F(deb_package, description_names_every_subcommand) {
    auto const description = run("dpkg-deb -f " + runtime_ + " Description");
    ASSERT_EQ(description.exit_code, 0) << description.out;
    auto const summary = description.out.substr(0, description.out.find('\n'));
    EXPECT_LE(summary.size(), 80u + 13u) << summary;  // "Description: " and at most 80
    // Control-file lines: the long description indented, no line over 80 columns, and no ';'
    // (what a CMake list would leave between its pieces).
    std::istringstream lines(description.out.substr(summary.size() + 1));
    for (std::string line; std::getline(lines, line);) {
        EXPECT_TRUE(line.starts_with(" ")) << line;
        EXPECT_LE(line.size(), 80u) << line;
    }
    EXPECT_EQ(description.out.find(';'), std::string::npos) << description.out;
    auto const subcommands = run(quoted(QMER_BINARY) +
                                 " --help | awk '/^Subcommands:/ { on = 1; next } on && NF "
                                 "{ print $1 }'");
    ASSERT_EQ(subcommands.exit_code, 0);
    std::istringstream names(subcommands.out);
    int count = 0;
    for (std::string name; names >> name; ++count)
        EXPECT_NE(description.out.find("qmer " + name), std::string::npos) << name << "\n"
                                                                           << description.out;
    EXPECT_EQ(count, 4) << subcommands.out;
}

// /usr/share/doc/qmer as Debian policy wants it: a machine-readable copyright file, the
// changelog compressed without a name or a time stamp (gzip -9n), and the README and workflow
// example as they are in the source tree.
TEST_F(deb_package, documents_as_debian_asks) {
    ASSERT_EQ(run("dpkg -x " + runtime_ + " root").exit_code, 0);
    std::string const doc = "root/usr/share/doc/qmer/";
    std::string const copyright = slurp(dir() / (doc + "copyright"));
    EXPECT_TRUE(copyright.starts_with(
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"))
        << copyright;
    for (char const* field :
         {"\nUpstream-Name: qmer\n", "\n\nFiles: *\n", "\nCopyright: ", "\nLicense: "})
        EXPECT_NE(copyright.find(field), std::string::npos) << field << copyright;

    std::string const source = QMER_SOURCE_DIR;
    auto const changelog =
        run("gzip -dc " + doc + "changelog.gz | cmp - " + quoted(source + "/NEWS.md") +
            " && od -An -tu1 -j3 -N5 " + doc + "changelog.gz");
    EXPECT_EQ(changelog.exit_code, 0) << changelog.out;
    EXPECT_EQ(changelog.out, "   0   0   0   0   0\n") << "gzip flags and time stamp";
    for (auto const& [installed, original] :
         {std::pair{"README.md", "/README.md"},
          std::pair{"examples/Snakefile", "/workflows/Snakefile"},
          std::pair{"examples/config.yaml", "/workflows/config.yaml"}})
        EXPECT_EQ(run("cmp " + doc + installed + " " + quoted(source + original)).exit_code, 0)
            << installed;
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
