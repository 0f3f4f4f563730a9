#include "io/output_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <htslib/bgzf.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/error.hpp"
#include "io/detail/uncached_writer.hpp"
#include "io/detail/whole_transfer.hpp"
#include "io/detail/zstd_writer.hpp"

namespace qmer::io {

namespace {

bool ends_with_nocase(std::string_view path, std::string_view suffix) {
    // Something must precede the suffix: ".gz" alone names no compressed file.
    if (path.size() <= suffix.size()) return false;
    return std::equal(suffix.begin(), suffix.end(), path.end() - suffix.size(), [](char s, char p) {
        return s == (p >= 'A' && p <= 'Z' ? p - 'A' + 'a' : p);
    });
}

struct compression_suffix {
    std::string_view suffix;  // lower case
    output_compression compression;
};
constexpr std::array<compression_suffix, 3> compression_suffixes{{
    {".gz", output_compression::bgzf},
    {".bgz", output_compression::bgzf},
    {".zst", output_compression::zstd},
}};

compression_suffix const* find_compression_suffix(std::string_view path) noexcept {
    if (path == "-") return nullptr;
    for (auto const& s : compression_suffixes)
        if (ends_with_nocase(path, s.suffix)) return &s;
    return nullptr;
}

}  // namespace

output_compression compression_by_name(std::string_view path) noexcept {
    auto const* s = find_compression_suffix(path);
    return s ? s->compression : output_compression::none;
}

size_t compression_suffix_length(std::string_view path) noexcept {
    auto const* s = find_compression_suffix(path);
    return s ? s->suffix.size() : 0;
}

bool is_direct_output(std::string const& path) {
    if (path == "-") return true;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;  // does not exist yet: a new regular file
    return !S_ISREG(st.st_mode);
}

namespace {
std::string folder_of(std::string const& path) {
    std::filesystem::path const final_path(path);
    return final_path.has_parent_path() ? final_path.parent_path().string() : ".";
}
}  // namespace

void check_output_folder(std::string const& path) {
    if (is_direct_output(path)) return;
    std::string const folder = folder_of(path);
    if (::access(folder.c_str(), W_OK | X_OK) != 0)
        throw output_error("'" + path + "': cannot create a file in folder '" + folder +
                           "': " + std::strerror(errno));
}

namespace {
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

// The mode a new file gets from open(..., 0666): the umask applied. Applied by hand to files made
// by mkstemp (0600) and by O_TMPFILE (kernels before 5.19 ignore the umask there). Read from
// /proc rather than by setting and restoring the umask, which would let another thread create a
// file with none meanwhile.
mode_t creation_mode() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.starts_with("Umask:"))
            return 0666 & ~static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
    mode_t const mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

// The reason a BGZF write failed. errno is the system's reason when this thread made the write;
// with compression threads it is whatever this thread's last call left, so then only a full file
// system, the usual cause, is named.
int bgzf_failure_reason(bool threaded, int fd, int err) {
    if (!threaded) return err;
    struct statvfs fs {};
    return ::fstatvfs(fd, &fs) == 0 && fs.f_bavail == 0 ? ENOSPC : 0;
}

std::string proc_fd_path(int fd) {
    return "/proc/self/fd/" + std::to_string(fd);
}

// Six characters of [A-Za-z0-9], as mkstemp's XXXXXX.
std::string random_suffix() {
    static constexpr std::string_view letters =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    std::array<unsigned char, 6> bytes{};
    if (::getrandom(bytes.data(), bytes.size(), GRND_NONBLOCK) !=
        static_cast<ssize_t>(bytes.size())) {
        timespec now{};
        ::clock_gettime(CLOCK_REALTIME, &now);
        uint64_t x = static_cast<uint64_t>(now.tv_nsec) ^ (static_cast<uint64_t>(::getpid()) << 32);
        for (auto& b : bytes) b = static_cast<unsigned char>(x >>= 7);
    }
    std::string out;
    for (unsigned char b : bytes) out += letters[b % letters.size()];
    return out;
}

}  // namespace

output_file::output_file(std::string path, output_options options) : path_(std::move(path)) {
    open_stream(options.unnamed_temporary);
    output_compression const compression =
        options.compress_by_name ? compression_by_name(path_) : output_compression::none;
    try {
        if (compression == output_compression::bgzf) {
            // BGZF takes over a descriptor of its own; the FILE* stays the file's owner.
            int const fd = ::dup(::fileno(file_));
            if (fd < 0) fail("cannot open for compression");
            bgzf_ = ::bgzf_dopen(fd, "w");
            if (!bgzf_) {
                ::close(fd);
                fail("cannot open for compression");
            }
            if (options.threads > 0) ::bgzf_mt(bgzf_, static_cast<int>(options.threads), 256);
        } else if (compression == output_compression::zstd) {
            zstd_ = std::make_unique<detail::zstd_writer>(file_, detail::zstd_writer::default_level,
                                                          options.threads);
        } else if (options.uncached && !direct_) {
            // written_ opens the file being written, named or not (/proc/self/fd/N).
            uncached_ = std::make_unique<detail::uncached_writer>(written_.c_str(), ::fileno(file_),
                                                                  true, options.cached_prefix);
        }
    } catch (...) {
        discard();  // the constructor's failure leaves no destructor to do it
        throw;
    }
}

void output_file::open_stream(bool unnamed_temporary) {
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
    std::string const folder = folder_of(path_);
    // A hidden name beside the final one: same file system, so rename() is atomic.
    std::string hidden(".");
    hidden.append(std::filesystem::path(path_).filename().string()).append(".qmer-tmp-");
    hidden_prefix_ = std::move(hidden);
    remove_stale_temporaries(folder, hidden_prefix_);
    if (unnamed_temporary) {
        // Refused by file systems without it (EOPNOTSUPP), kernels before 3.11 (EISDIR, EINVAL):
        // then the named temporary, which reports any error that is not about O_TMPFILE.
        int const fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, creation_mode());
        if (fd >= 0) {
            std::string proc = proc_fd_path(fd);
            // commit() names the file by linking this path: without /proc, the named temporary.
            if (::access(proc.c_str(), F_OK) == 0) {
                // Held until the file is closed: once commit() has linked it to the hidden name,
                // a run that starts before the rename sees a live writer there.
                ::flock(fd, LOCK_EX | LOCK_NB);
                file_ = ::fdopen(fd, "wb");
                if (!file_) {
                    ::close(fd);
                    fail("cannot open for writing");
                }
                written_ = std::move(proc);
                unnamed_ = true;
                return;
            }
            ::close(fd);
        }
    }
    open_named_temporary(folder, hidden_prefix_);
}

void output_file::open_named_temporary(std::string const& folder, std::string const& hidden) {
    std::string templ = (std::filesystem::path(folder) / (hidden + "XXXXXX")).string();
    int const fd = ::mkstemp(templ.data());
    if (fd < 0) fail("cannot create a file in folder '" + folder + "'");
    // Held until the file is closed: a later run sees that this temporary has a live writer.
    ::flock(fd, LOCK_EX | LOCK_NB);
    ::fchmod(fd, creation_mode());  // mkstemp creates 0600
    written_ = templ;
    file_ = ::fdopen(fd, "wb");
    if (!file_) {
        ::close(fd);
        ::unlink(written_.c_str());
        written_.clear();
        fail("cannot open for writing");
    }
}

output_file::~output_file() {
    if (!done_) discard();
}

void output_file::write(void const* data, size_t size) {
    if (size == 0) return;
    if (bgzf_) {
        if (::bgzf_write(bgzf_, data, size) != static_cast<ssize_t>(size)) {
            int const err = errno;
            fail_with(bgzf_failure_reason(bgzf_->mt != nullptr, ::fileno(file_), err),
                      "write failed");
        }
        return;
    }
    if (zstd_) {
        if (!zstd_->write(data, size)) fail_with(0, "write failed: " + zstd_->error());
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
        bool const threaded = b->mt != nullptr;
        if (::bgzf_close(b) != 0) {
            int const err = errno;
            fail_with(bgzf_failure_reason(threaded, ::fileno(file_), err),
                      "write failed while compressing");
        }
    }
    if (zstd_) {
        if (!zstd_->finish()) fail_with(0, "write failed: " + zstd_->error());
        zstd_.reset();
    }
    if (uncached_) {
        int const e = uncached_->finish();
        uncached_.reset();
        if (e != 0) fail_with(e, "write failed");
    }
    if (std::fflush(file_) != 0) fail("write failed");
    if (!owns_stream_) {
        done_ = true;
        return;
    }
    // A file without a name is linked through a descriptor of its own, kept open past the close
    // of the stream, whose errors (deferred write errors) come first.
    int const keep = unnamed_ ? ::dup(::fileno(file_)) : -1;
    if (unnamed_ && keep < 0) fail("cannot keep the finished file open");
    std::FILE* f = file_;
    file_ = nullptr;
    if (std::fclose(f) != 0) {
        int const err = errno;
        if (keep >= 0) ::close(keep);
        fail_with(err, "closing failed");
    }
    done_ = true;
    if (direct_) return;
    if (unnamed_) {
        give_final_name(keep);  // closes keep
        return;
    }
    if (std::rename(written_.c_str(), path_.c_str()) != 0) {
        int const err = errno;
        ::unlink(written_.c_str());
        throw output_error("'" + path_ +
                           "': cannot rename the finished file into place: " + std::strerror(err));
    }
}

void output_file::give_final_name(int fd) {
    // linkat() cannot replace a file: the finished file gets a hidden name of its own, then
    // rename() puts it over the final name atomically. Between the two, a run killed leaves that
    // hidden name, which the next output to this path removes (it looks like a named temporary).
    std::string const folder = folder_of(path_);
    std::string const from = proc_fd_path(fd);
    int err = 0;
    for (int attempt = 0; attempt < 100; ++attempt) {
        std::string const hidden =
            (std::filesystem::path(folder) / (hidden_prefix_ + random_suffix())).string();
        if (::linkat(AT_FDCWD, from.c_str(), AT_FDCWD, hidden.c_str(), AT_SYMLINK_FOLLOW) != 0) {
            err = errno;
            if (err == EEXIST) continue;
            break;
        }
        if (std::rename(hidden.c_str(), path_.c_str()) != 0) {
            err = errno;
            ::unlink(hidden.c_str());
            break;
        }
        ::close(fd);
        return;
    }
    ::close(fd);
    throw output_error("'" + path_ +
                       "': cannot put the finished file in place: " + std::strerror(err));
}

void output_file::discard() noexcept {
    if (done_) return;
    done_ = true;
    uncached_.reset();  // its thread stops before the file goes
    zstd_.reset();
    if (bgzf_) ::bgzf_close(bgzf_);
    bgzf_ = nullptr;
    if (file_ && owns_stream_) std::fclose(file_);
    file_ = nullptr;
    // A file without a name went with its last descriptor.
    if (!direct_ && !unnamed_ && !written_.empty()) ::unlink(written_.c_str());
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
