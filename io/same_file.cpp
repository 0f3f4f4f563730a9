#include "io/same_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

#include "core/error.hpp"

namespace qmer::io {
namespace {

// What makes two names one file: device and inode for a file that exists (a regular file, a named
// pipe or a socket), the resolved path for an output that does not exist yet.
struct file_identity {
    dev_t device = 0;
    ino_t inode = 0;
    std::string new_path;  // empty for an existing file

    bool operator==(file_identity const&) const = default;
};

// nullopt for names that are never replaced and never interleave harmfully (character and block
// devices, folders) and for inputs that cannot be stat()ed (the reader reports those).
std::optional<file_identity> identify(std::string const& path, bool output) {
    struct stat st {};
    int const rc = path == "-" ? ::fstat(output ? STDOUT_FILENO : STDIN_FILENO, &st)
                               : ::stat(path.c_str(), &st);
    if (rc == 0) {
        if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
            return std::nullopt;
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

std::string shown(named_file const& f) {
    return "'" + f.path + "' (" + f.role + ")";
}

[[noreturn]] void refuse_repeated_input(named_file const& input, named_file const& earlier) {
    if (input.path == "-" && earlier.path == "-")
        throw usage_error(shown(input) + " and " + shown(earlier) +
                          " both read standard input, which can be read once");
    throw usage_error(shown(input) + " and " + shown(earlier) +
                      " are the same file: give each input once");
}

[[noreturn]] void refuse_shared_stdout(named_file const& output, named_file const& earlier) {
    named_file const& named = output.path == "-" ? earlier : output;
    if (named.path == "-")
        throw usage_error(shown(output) + " and " + shown(earlier) +
                          " would both write to standard output: give one of them a file name");
    throw usage_error(shown(named) + " is the file standard output is written to, and " +
                      shown(named.path == output.path ? earlier : output) +
                      " writes there too: give it another name");
}

[[noreturn]] void refuse(named_file const& output, named_file const& other) {
    throw usage_error(shown(output) + " is the same file as " + shown(other) +
                      ": it would be replaced; write the output elsewhere");
}

}  // namespace

void refuse_repeated_inputs(std::vector<named_file> const& inputs) {
    std::vector<std::pair<std::optional<file_identity>, named_file const*>> seen;
    for (auto const& in : inputs) {
        auto id = identify(in.path, false);
        for (auto const& [earlier_id, earlier] : seen)
            if ((in.path == "-" && earlier->path == "-") || (id && earlier_id == id))
                refuse_repeated_input(in, *earlier);
        seen.emplace_back(std::move(id), &in);
    }
}

void refuse_same_files(std::vector<named_file> const& inputs,
                       std::vector<named_file> const& outputs) {
    struct seen_file {
        std::optional<file_identity> id;
        named_file const* named;
        bool output;
    };
    std::vector<seen_file> seen;
    for (auto const& in : inputs) seen.push_back({identify(in.path, false), &in, false});
    for (auto const& out : outputs) {
        auto id = identify(out.path, true);
        // Inputs come first in `seen`, so an output that is both is named against the input.
        for (auto const& earlier : seen) {
            bool const both_stdout =
                earlier.output && out.path == "-" && earlier.named->path == "-";
            if (!both_stdout && !(id && earlier.id == id)) continue;
            if (!earlier.output) refuse(out, *earlier.named);
            if (both_stdout || out.path == "-" || earlier.named->path == "-")
                refuse_shared_stdout(out, *earlier.named);
            refuse(out, *earlier.named);
        }
        seen.push_back({std::move(id), &out, true});
    }
}

}  // namespace qmer::io
