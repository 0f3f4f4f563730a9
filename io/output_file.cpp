#include "io/output_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <htslib/bgzf.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>

#include "core/error.hpp"
#include "io/detail/uncached_writer.hpp"
#include "io/detail/whole_transfer.hpp"

namespace qmer::io {

bool is_direct_output(std::string const& path) {
    if (path == "-") return true;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;  // does not exist yet: a new regular file
    return !S_ISREG(st.st_mode);
}

void check_output_folder(std::string const& path) {
    if (is_direct_output(path)) return;
    std::filesystem::path const final_path(path);
    std::string const folder =
        final_path.has_parent_path() ? final_path.parent_path().string() : ".";
    if (::access(folder.c_str(), W_OK | X_OK) != 0)
        throw output_error("'" + path + "': cannot create a file in folder '" + folder +
                           "': " + std::strerror(errno));
}

namespace {
bool wants_compression(std::string const& path) {
    auto const ends_with = [&](std::string_view suffix) {
        return path.size() > suffix.size() &&
               path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    return path != "-" && (ends_with(".gz") || ends_with(".bgz"));
}
// Removes the hidden temporaries `prefix`XXXXXX in `folder` that a killed run left (SIGKILL, a
// crash, power loss: nothing ran to remove them). A writer holds an exclusive flock() on its
// temporary from mkstemp() until the file is closed, so one that can be locked has no live writer;
// it must also be unmodified for stale_seconds, which covers the moment between a writer's close
// and its rename. Anything else (a name of another shape, a symlink, a folder) is left alone.
void remove_stale_temporaries(std::string const& folder, std::string const& prefix) {
    constexpr std::time_t stale_seconds = 10;
    DIR* dir = ::opendir(folder.c_str());
    if (!dir) return;
    std::time_t const now = std::time(nullptr);
    while (dirent const* entry = ::readdir(dir)) {
        std::string_view const name(entry->d_name);
        if (name.size() != prefix.size() + 6 || !name.starts_with(prefix)) continue;
        std::string const path = (std::filesystem::path(folder) / name).string();
        // Read-write: on NFS, flock() is a POSIX write lock, which a read-only descriptor cannot
        // take.
        int const fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat st {};
        if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime + stale_seconds < now &&
            ::flock(fd, LOCK_EX | LOCK_NB) == 0)
            ::unlink(path.c_str());
        ::close(fd);
    }
    ::closedir(dir);
}

}  // namespace

output_file::output_file(std::string path, output_options options) : path_(std::move(path)) {
    open_stream();
    if (options.compress_by_name && wants_compression(path_)) {
        // BGZF takes over the descriptor; the FILE* is only kept as its owner until then.
        int const fd = ::dup(::fileno(file_));
        if (fd < 0) fail("cannot open for compression");
        bgzf_ = ::bgzf_dopen(fd, "w");
        if (!bgzf_) {
            ::close(fd);
            fail("cannot open for compression");
        }
        if (options.threads > 0) ::bgzf_mt(bgzf_, static_cast<int>(options.threads), 256);
    } else if (options.uncached && !direct_) {
        uncached_ = std::make_unique<detail::uncached_writer>(written_.c_str(), ::fileno(file_),
                                                              true, options.cached_prefix);
    }
}

void output_file::open_stream() {
    if (path_ == "-") {
        file_ = stdout;
        owns_stream_ = false;
        direct_ = true;
        written_ = "<stdout>";
        return;
    }
    if (is_direct_output(path_)) {
        direct_ = true;
        written_ = path_;
        file_ = std::fopen(path_.c_str(), "wb");
        if (!file_) fail("cannot open for writing");
        return;
    }
    std::filesystem::path const final_path(path_);
    std::string const folder =
        final_path.has_parent_path() ? final_path.parent_path().string() : ".";
    // A hidden name beside the final one: same file system, so rename() is atomic.
    std::string hidden(".");
    hidden.append(final_path.filename().string()).append(".qmer-tmp-");
    remove_stale_temporaries(folder, hidden);
    std::string templ = (std::filesystem::path(folder) / (hidden + "XXXXXX")).string();
    int const fd = ::mkstemp(templ.data());
    if (fd < 0) fail("cannot create a file in folder '" + folder + "'");
    // Held until the file is closed: a later run sees that this temporary has a live writer.
    ::flock(fd, LOCK_EX | LOCK_NB);
    // mkstemp creates 0600; give the final file the usual permissions (umask applies).
    mode_t const mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
    written_ = templ;
    file_ = ::fdopen(fd, "wb");
    if (!file_) {
        ::close(fd);
        ::unlink(written_.c_str());
        fail("cannot open for writing");
    }
}

output_file::~output_file() {
    if (!done_) discard();
}

void output_file::write(void const* data, size_t size) {
    if (size == 0) return;
    if (bgzf_) {
        if (::bgzf_write(bgzf_, data, size) != static_cast<ssize_t>(size)) fail("write failed");
        return;
    }
    if (uncached_) {
        if (int const e = uncached_->write(data, size); e != 0) fail_with(e, "write failed");
        return;
    }
    if (std::fwrite(data, 1, size, file_) != size) fail("write failed");
}

void output_file::write_at(uint64_t offset, void const* data, size_t size) {
    if (!can_rewrite()) throw std::logic_error("output_file: write_at on a stream");
    if (uncached_) {
        if (int const e = uncached_->write_at(offset, data, size); e != 0)
            fail_with(e, "write failed");
        return;
    }
    if (std::fflush(file_) != 0) fail("write failed");
    if (int const e = detail::pwrite_whole(::fileno(file_), data, size, offset); e != 0)
        fail_with(e, "write failed");
}

void output_file::read_at(uint64_t offset, void* out, size_t size) {
    if (!can_rewrite()) throw std::logic_error("output_file: read_at on a stream");
    if (uncached_) {
        if (int const e = uncached_->read_at(offset, out, size); e != 0)
            fail_with(e > 0 ? e : 0, "cannot read back what was written");
        return;
    }
    if (std::fflush(file_) != 0) fail("write failed");
    if (int const e = detail::pread_whole(::fileno(file_), out, size, offset); e != 0)
        fail_with(e > 0 ? e : 0, "cannot read back what was written");
}

void output_file::commit() {
    if (done_) return;
    if (bgzf_) {
        BGZF* b = bgzf_;
        bgzf_ = nullptr;
        if (::bgzf_close(b) != 0) fail("write failed while compressing");
    }
    if (uncached_) {
        int const e = uncached_->finish();
        uncached_.reset();
        if (e != 0) fail_with(e, "write failed");
    }
    if (std::fflush(file_) != 0) fail("write failed");
    if (owns_stream_) {
        std::FILE* f = file_;
        file_ = nullptr;
        if (std::fclose(f) != 0) {
            done_ = true;
            if (!direct_) ::unlink(written_.c_str());
            fail("closing failed");
        }
    }
    if (!direct_ && std::rename(written_.c_str(), path_.c_str()) != 0) {
        int const err = errno;
        ::unlink(written_.c_str());
        done_ = true;
        throw output_error("'" + path_ +
                           "': cannot rename the finished file into place: " + std::strerror(err));
    }
    done_ = true;
}

void output_file::discard() noexcept {
    if (done_) return;
    done_ = true;
    uncached_.reset();  // its thread stops before the file goes
    if (bgzf_) ::bgzf_close(bgzf_);
    bgzf_ = nullptr;
    if (file_ && owns_stream_) std::fclose(file_);
    file_ = nullptr;
    if (!direct_ && !written_.empty()) ::unlink(written_.c_str());
}

void output_file::fail(std::string_view what) {
    fail_with(errno, what);
}

void output_file::fail_with(int err, std::string_view what) {
    discard();
    throw output_error("'" + path_ + "': " + std::string(what) +
                       (err ? std::string(": ") + std::strerror(err) : std::string()));
}

}  // namespace qmer::io
