#pragma once
// A fresh folder under the temporary directory ($TMPDIR, else /tmp), removed with everything in
// it when the object goes, however the test ends (a failed ASSERT returns early). CI runs the
// suite with a TMPDIR of its own and fails if anything is left in it (.ci/run).

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

namespace qmer::test {

class temp_folder {
  public:
    explicit temp_folder(std::string const& prefix = "qmer-test") {
        std::string templ =
            (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
        if (::mkdtemp(templ.data()) == nullptr)
            throw std::filesystem::filesystem_error(
                "mkdtemp", templ, std::error_code(errno, std::generic_category()));
        path_ = templ;
    }
    ~temp_folder() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    temp_folder(temp_folder const&) = delete;
    temp_folder& operator=(temp_folder const&) = delete;

    std::filesystem::path const& path() const noexcept { return path_; }
    std::filesystem::path operator/(std::string const& name) const { return path_ / name; }

  private:
    std::filesystem::path path_;
};

}  // namespace qmer::test
