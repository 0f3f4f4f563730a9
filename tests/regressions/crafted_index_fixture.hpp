#pragma once
// For the regression tests of index loading: a fresh folder per test, filter arrays written as an
// index whose checksum is valid (a file made on purpose, or damaged before it was sealed, gets past
// the checksum), and the check that loading it as filter type F is refused as a damaged index.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "app/filters/persistence.hpp"
#include "core/error.hpp"
#include "core/filter/filter.hpp"
#include "io/index_file.hpp"

namespace qmer::test {

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
