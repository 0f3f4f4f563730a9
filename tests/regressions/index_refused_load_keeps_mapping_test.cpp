// Regression (found by fuzz/index_loader_fuzz, as a slowdown: the kernel's mapping tree grows with
// every input left mapped): io::index_file maps the file, and when a check then fails the
// constructor must unmap it before it throws - no destructor runs for an object whose constructor
// throws - or every refused index stays mapped for the rest of the process.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "io/index_file.hpp"
#include "temp_folder.hpp"

namespace {

namespace fs = std::filesystem;

size_t mappings_of(std::string const& path) {
    std::ifstream maps("/proc/self/maps");
    size_t n = 0;
    for (std::string line; std::getline(maps, line);)
        if (line.find(path) != std::string::npos) ++n;
    return n;
}

TEST(index_refused_load_keeps_mapping, refused_files_are_unmapped) {
    qmer::test::temp_folder const folder("qmer-regression");
    fs::path const& dir = folder.path();

    // Refused at different checks: no magic, truncated, bad checksum.
    std::string const contents[] = {
        std::string(100, 'x'), std::string("QMERIDX\0", 8) + std::string(10, '\0'),
        std::string("QMERIDX\0\1\0\0\0\4\3\2\1", 16) + std::string(64, '\0')};
    for (std::string const& bytes : contents) {
        std::string const path = (dir / "bad.qmer").string();
        {
            std::ofstream out(path, std::ios::binary);
            out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        }
        for (int i = 0; i < 50; ++i) {
            EXPECT_THROW(qmer::io::index_file{path}, qmer::index_error);
        }
        EXPECT_EQ(mappings_of(path), 0u) << "a refused index is still mapped";
    }
}

}  // namespace
