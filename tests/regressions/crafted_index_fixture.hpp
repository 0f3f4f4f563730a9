#pragma once
// For the regression tests of index loading: a fresh folder per test, filter arrays written as an
// index whose checksum is valid (a file made on purpose, or damaged before it was sealed, gets past
// the checksum), and the check that loading it as filter type F is refused as a damaged index.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "app/filters/persistence.hpp"
#include "core/error.hpp"
#include "core/filter/filter.hpp"
#include "fuzz/index_damage.hpp"
#include "io/index_file.hpp"

namespace qmer::test {

// Writes to `out` the index a saved index_damage finding (fuzz/findings/NAME, an edit script)
// made: the script applied to the target's valid indexes (fuzz/index_damage.hpp). Findings are
// crafted files: resealed, so their checksum is valid, and changed.
inline void write_crafted_finding(std::string const& name, std::filesystem::path const& out) {
    std::ifstream in(std::string(QMER_SOURCE_DIR) + "/fuzz/findings/" + name, std::ios::binary);
    std::vector<uint8_t> const script{std::istreambuf_iterator<char>(in),
                                      std::istreambuf_iterator<char>()};
    ASSERT_GE(script.size(), 2u) << name;
    auto const indexes = fuzz::build_valid_indexes();
    auto const crafted = fuzz::apply_edit_script(indexes, script.data(), script.size());
    ASSERT_NE(crafted.original, nullptr);
    ASSERT_TRUE(crafted.resealed) << "the finding is a crafted file with a valid checksum";
    ASSERT_NE(crafted.bytes, crafted.original->bytes);
    std::ofstream file(out, std::ios::binary);
    file.write(reinterpret_cast<char const*>(crafted.bytes.data()),
               static_cast<std::streamsize>(crafted.bytes.size()));
}

class crafted_index_test : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string templ =
            (std::filesystem::temp_directory_path() / "qmer-regression-XXXXXX").string();
        ASSERT_NE(::mkdtemp(templ.data()), nullptr);
        dir_ = templ;
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // Writes `arrays` as a sealed index; returns its path.
    std::string write_index(std::vector<filter_array> const& arrays) const {
        std::string const path = (dir_ / "crafted.qmer").string();
        io::index_header header;
        header.filter = "crafted";
        io::index_writer writer(path, header);
        for (auto const& a : arrays) writer.add_section(a.params, a.words);
        writer.commit();
        return path;
    }

    // Loading `arrays` as F must throw index_error "'<path>': damaged index (...)" whose message
    // holds `reason`; `what_was_done` names the crafted change in a failure.
    template <typename F>
    void expect_damaged(std::vector<filter_array> const& arrays, std::string const& reason,
                        std::string const& what_was_done) const {
        std::string const path = write_index(arrays);
        io::index_file const index(path);  // the checksum is valid: this loads
        try {
            auto loaded = app::load_filter<F>(index);
            ADD_FAILURE() << what_was_done << " was accepted";
        } catch (index_error const& e) {
            std::string const what = e.what();
            EXPECT_NE(what.find("'" + path + "': damaged index"), std::string::npos) << what;
            EXPECT_NE(what.find(reason), std::string::npos) << what;
        }
    }

    std::filesystem::path dir_;
};

}  // namespace qmer::test
