#include "io/spill_file.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace qmer::io {
namespace {

// One message about the folder: "'FOLDER': what" (appended piece by piece: GCC 12 warns falsely
// about overlapping copies in long chains of string operator+).
[[noreturn]] void fail(std::string const& folder, std::initializer_list<std::string_view> what) {
    std::string message = "'";
    message.append(folder).append("': ");
    for (auto piece : what) message.append(piece);
    throw output_error(message);
}

std::string gigabytes(uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GB", static_cast<double>(bytes) / 1e9);
    return text;
}

}  // namespace

uint64_t free_bytes_in(std::string const& folder) noexcept {
    struct statvfs fs {};
    if (::statvfs(folder.empty() ? "." : folder.c_str(), &fs) != 0)
        return std::numeric_limits<uint64_t>::max();
    return static_cast<uint64_t>(fs.f_bavail) * static_cast<uint64_t>(fs.f_frsize);
}

spill_file::spill_file(std::string folder)
    : folder_(folder.empty() ? std::string(".") : std::move(folder)) {
#ifdef O_TMPFILE
    fd_ = ::open(folder_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
    if (fd_ < 0) {
        // File systems without O_TMPFILE (some network and FUSE ones): a named file, unlinked
        // at once, so it is gone with the process however that ends.
        std::vector<char> path(folder_.begin(), folder_.end());
        for (char c : std::string_view("/.qmer-spill-XXXXXX")) path.push_back(c);
        path.push_back('\0');
        fd_ = ::mkostemp(path.data(), O_CLOEXEC);
        if (fd_ >= 0) ::unlink(path.data());
    }
    if (fd_ < 0)
        fail(folder_, {"cannot make the build's scratch file there: ", std::strerror(errno),
                       " (choose another folder with --temp-dir)"});
}

spill_file::~spill_file() {
    if (fd_ >= 0) ::close(fd_);
}

uint64_t spill_file::append(void const* data, size_t bytes) {
    uint64_t const offset = end_.fetch_add(bytes, std::memory_order_relaxed);
    auto const* p = static_cast<char const*>(data);
    for (size_t done = 0; done < bytes;) {
        ssize_t const n = ::pwrite(fd_, p + done, bytes - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            fail(folder_,
                 {"writing the build's scratch file failed after ", gigabytes(offset + done), ": ",
                  n < 0 ? std::strerror(errno) : "no progress",
                  " (free space there, choose another folder with --temp-dir, or raise "
                  "--max-memory)"});
        done += static_cast<size_t>(n);
    }
    return offset;
}

uint64_t spill_file::copy_from(std::string const& path) {
    int const in = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) throw input_error(path + ": cannot open: " + std::strerror(errno));
    std::vector<char> buffer(size_t{1} << 20);
    uint64_t copied = 0;
    while (true) {
        ssize_t const n = ::read(in, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int const error = errno;
            if (in != STDIN_FILENO) ::close(in);
            throw input_error(path + ": read failed: " + std::strerror(error));
        }
        if (n == 0) break;
        append(buffer.data(), static_cast<size_t>(n));
        copied += static_cast<uint64_t>(n);
    }
    if (in != STDIN_FILENO) ::close(in);
    return copied;
}

std::string spill_file::proc_path() const {
    return "/proc/self/fd/" + std::to_string(fd_);
}

void spill_file::read(uint64_t offset, void* data, size_t bytes) const {
    auto* p = static_cast<char*>(data);
    for (size_t done = 0; done < bytes;) {
        ssize_t const n = ::pread(fd_, p + done, bytes - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            fail(folder_, {"reading the build's scratch file back failed: ",
                           n < 0 ? std::strerror(errno) : "it is shorter than written"});
        done += static_cast<size_t>(n);
    }
}

bool spill_file::release(uint64_t offset, size_t bytes) noexcept {
    if (bytes == 0) return true;
    return ::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                       static_cast<off_t>(bytes)) == 0;
}

}  // namespace qmer::io
