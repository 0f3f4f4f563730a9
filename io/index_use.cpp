#include "io/index_use.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace qmer::io {

std::optional<index_exclusive_use> index_exclusive_use::try_take(std::string const& path) {
    int const fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    // flock() locks belong to the open file description: a second open of the same file, in this
    // process or another, conflicts with it, and the lock goes when the last descriptor closes
    // (however the process ends, SIGKILL included).
    int rc;
    do {
        rc = ::flock(fd, LOCK_EX | LOCK_NB);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        // EWOULDBLOCK: another query holds it. Anything else (ENOLCK on a file system without
        // locks): whether anyone else uses the file cannot be told, so no claim is made.
        bool const held_elsewhere = errno == EWOULDBLOCK;
        ::close(fd);
        if (held_elsewhere) return std::nullopt;
        return index_exclusive_use(-1);
    }
    return index_exclusive_use(fd);
}

index_exclusive_use::index_exclusive_use(index_exclusive_use&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)) {}

index_exclusive_use& index_exclusive_use::operator=(index_exclusive_use&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

index_exclusive_use::~index_exclusive_use() {
    if (fd_ >= 0) ::close(fd_);
}

}  // namespace qmer::io
