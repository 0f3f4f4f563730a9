#include "io/same_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

#include "core/error.hpp"

namespace qmer::io {
namespace {

// What makes two names one file: device and inode for a regular file that exists, the resolved
// path for an output that does not exist yet.
struct file_identity {
    dev_t device = 0;
    ino_t inode = 0;
    std::string new_path;  // empty for an existing file

    bool operator==(file_identity const&) const = default;
};

// nullopt for names that can never be replaced by a rename (devices, pipes, sockets, folders) and
// for inputs that cannot be stat()ed (the reader reports those).
std::optional<file_identity> identify(std::string const& path, bool output) {
    struct stat st {};
    int const rc = path == "-" ? ::fstat(output ? STDOUT_FILENO : STDIN_FILENO, &st)
                               : ::stat(path.c_str(), &st);
    if (rc == 0) {
        if (!S_ISREG(st.st_mode)) return std::nullopt;
        return file_identity{.device = st.st_dev, .inode = st.st_ino, .new_path = {}};
    }
    if (!output || path == "-") return std::nullopt;
    // A new output (or a dangling symlink, which the rename replaces): its folder, resolved, and
    // its name.
    std::filesystem::path const p(path);
    std::filesystem::path const folder = p.has_parent_path() ? p.parent_path() : ".";
    std::error_code ec;
    std::filesystem::path resolved = std::filesystem::weakly_canonical(folder, ec);
    if (ec) resolved = std::filesystem::absolute(folder, ec).lexically_normal();
    return file_identity{.device = 0, .inode = 0, .new_path = (resolved / p.filename()).string()};
}

[[noreturn]] void refuse(named_file const& output, named_file const& other) {
    throw usage_error("'" + output.path + "' (" + output.role + ") is the same file as '" +
                      other.path + "' (" + other.role +
                      "): it would be replaced; write the output elsewhere");
}

}  // namespace

void refuse_same_files(std::vector<named_file> const& inputs,
                       std::vector<named_file> const& outputs) {
    std::vector<std::pair<file_identity, named_file const*>> seen;
    for (auto const& in : inputs)
        if (auto id = identify(in.path, false)) seen.emplace_back(std::move(*id), &in);
    for (auto const& out : outputs) {
        auto id = identify(out.path, true);
        if (!id) continue;
        // Inputs come first in `seen`, so an output that is both is named against the input.
        for (auto const& [other, named] : seen)
            if (other == *id) refuse(out, *named);
        // Standard output is written in place, never replaced by a rename: `-o - --summary -`
        // writes both in turn, so it only has to differ from the inputs.
        if (out.path != "-") seen.emplace_back(std::move(*id), &out);
    }
}

}  // namespace qmer::io
