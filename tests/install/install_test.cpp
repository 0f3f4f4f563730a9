// `cmake --install` into a scratch prefix: every file lands under the prefix where its consumer
// looks (man, bash-completion, find_package), the installed binary runs, `man` renders the page,
// the installed completion completes subcommands and options, and a program builds against the
// installed header-only package and gives the right answers.
#include <filesystem>
#include <string>

#include "app/filters/registry.hpp"
#include "install/install_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using qmer::test::install_test;

// 80 bases; the consumer indexes its 21-mers.
constexpr char const* reference =
    "ACGGTCTTAGCCATGCAAGTCGATCCGATAGCTAGGCTTACCGATGCATTACGGCTAGCATCGATCGGATCCTAGCATGCA";

TEST_F(install_test, puts_every_file_under_the_prefix) {
    ASSERT_TRUE(install("prefix"));
    for (char const* file :
         {"bin/qmer", "share/man/man1/qmer.1.gz", "share/bash-completion/completions/qmer",
          "include/qmer/core/qf/concurrent/expandable.hpp", "include/qmer/core/kmer/scanner.hpp",
          "share/cmake/qmer/qmerConfig.cmake", "share/cmake/qmer/qmerConfigVersion.cmake",
          "share/cmake/qmer/qmerTargets.cmake"})
        EXPECT_TRUE(fs::is_regular_file(dir() / "prefix" / file)) << file;
    auto const version = run("prefix/bin/qmer --version");
    EXPECT_EQ(version.exit_code, 0);
    EXPECT_EQ(version.out, std::string("qmer ") + QMER_VERSION + "\n");
    // Nothing lands outside the prefix's usual folders (no build tree, no test binaries).
    for (auto const& entry : fs::directory_iterator(dir() / "prefix"))
        EXPECT_TRUE(entry.path().filename() == "bin" || entry.path().filename() == "share" ||
                    entry.path().filename() == "include")
            << entry.path();
}

TEST_F(install_test, man_renders_the_installed_page) {
    if (run("command -v man").exit_code != 0)
        GTEST_FAIL() << "man is not installed (scripts/install-deps installs man-db)";
    ASSERT_TRUE(install("prefix"));
    // Found by name through the prefix's share/man, as `man qmer` finds /usr/local/share/man.
    auto const page = run("MANPATH=prefix/share/man MANWIDTH=100 man --warnings qmer 2> warnings");
    ASSERT_EQ(page.exit_code, 0) << page.out;
    EXPECT_EQ(slurp(dir() / "warnings"), "") << "groff warnings";
    for (char const* text :
         {"qmer - screen sequencing reads", "qmer index [OPTIONS] -o INDEX",
          "qmer query [OPTIONS] INDEX READS [READS2]", "--min-containment X", "EXIT STATUS"})
        EXPECT_NE(page.out.find(text), std::string::npos) << text << "\n" << page.out;
}

TEST_F(install_test, bash_completes_subcommands_options_and_their_values) {
    char const* const bash_completion = "/usr/share/bash-completion/bash_completion";
    if (!fs::exists(bash_completion))
        GTEST_FAIL() << "bash-completion is not installed (scripts/install-deps installs it)";
    ASSERT_TRUE(install("prefix"));
    write_file("reads.fq", "");
    write_file("scratch.fa", "");
    fs::create_directory(dir() / "scratch");
    // bash-completion loads share/bash-completion/completions/qmer from XDG_DATA_DIRS on first
    // use, as a login shell does; `complete` then says which function it bound.
    auto const r = run(
        std::string("export XDG_DATA_DIRS=$PWD/prefix/share PATH=$PWD/prefix/bin:$PATH\n"
                    "source ") +
        bash_completion +
        "\n"
        "__load_completion qmer || exit 1\n"
        "complete -p qmer\n"
        "t() {\n"
        "  COMP_WORDS=(\"$@\"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
        "  COMP_LINE=\"$*\"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()\n"
        "  _qmer qmer \"${COMP_WORDS[-1]}\" \"${COMP_WORDS[-2]}\"\n"
        "  echo \"$*|${COMPREPLY[*]}\"\n"
        "}\n"
        "t qmer que; t qmer ''; t qmer query --mat; t qmer index --fi\n"
        "t qmer query -t ''; t qmer query -o rea; t qmer query --quick --inter\n"
        "t qmer index --filter blo; t qmer index --temp-dir s; t qmer index --max-memory ''\n"
        "t qmer info rea; t qmer index --al\n"
        // --filter=cu: bash splits the word at '=', the completion joins it again.
        "COMP_WORDS=(qmer index --filter = cu); COMP_CWORD=4; COMP_LINE='qmer index "
        "--filter=cu'\n"
        "COMP_POINT=${#COMP_LINE}; COMPREPLY=(); _qmer qmer cu =; echo \"=cu|${COMPREPLY[*]}\"\n"
        // Every kind, in the binary's order, for the test below to compare.
        "t qmer index --filter ''\n");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("complete -F _qmer qmer"), std::string::npos) << r.out;
    for (char const* line :
         {"qmer que|query\n", "qmer |index query merge info\n", "qmer query --mat|--matched\n",
          "qmer index --fi|--filter --fill\n", "qmer query -t |\n", "qmer query -o rea|reads.fq\n",
          "qmer query --quick --inter|--interleaved\n",
          "qmer index --filter blo|bloom blocked-bloom\n", "qmer index --temp-dir s|scratch\n",
          "qmer index --max-memory |\n", "qmer info rea|reads.fq\n",
          "qmer index --al|--allow-empty\n", "=cu|cuckoo\n"})
        EXPECT_NE(r.out.find(line), std::string::npos) << line << r.out;
    // The values of --filter are the kinds qmer offers (app/filters/registry.hpp), read from the
    // binary when TAB is pressed: a kind added or renamed shows without touching the completion.
    std::string kinds = "qmer index --filter |";
    for (auto const name : qmer::app::filter_kind_names)
        kinds.append(kinds.ends_with('|') ? "" : " ").append(name);
    EXPECT_NE(r.out.find(kinds + "\n"), std::string::npos) << kinds << "\n" << r.out;
}

TEST_F(install_test, a_program_builds_against_the_installed_core_package) {
    ASSERT_TRUE(install("prefix"));
    // core/ is the part with no I/O and no TBB: its installed headers include neither.
    auto const includes =
        run("grep -rhE '#include <(tbb|htslib|CLI|seqan3|iostream|fstream|cstdio)' prefix/include");
    EXPECT_EQ(includes.out, "");
    std::string const ref = reference;
    // A piece of the reference, the reverse complement of another, and a sequence it lacks.
    auto const r =
        build_and_run_consumer("prefix", "21 " + ref + " " + ref.substr(10, 40) +
                                             " GCCGTAATGCATCGGTAAGCCTAGCTATCGGATCGACTTGCATGGCTAAG "
                                             "TTTTGGGGCCCCAAAATTTTGGGGCCCCAAAA");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(r.out, ref.substr(10, 40) +
                         "\t20\t20\n"
                         "GCCGTAATGCATCGGTAAGCCTAGCTATCGGATCGACTTGCATGGCTAAG\t30\t30\n"
                         "TTTTGGGGCCCCAAAATTTTGGGGCCCCAAAA\t12\t0\n");
}

}  // namespace
