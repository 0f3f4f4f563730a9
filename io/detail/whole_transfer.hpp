#pragma once
// pread / pwrite of a whole range: through short transfers and EINTR. One home for the loop the
// index file's readers, output_file's rewrites and the uncached writer all need.

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace qmer::io::detail {

// 0; an errno; or -1 for a read that met the file's end first.
inline int pread_whole(int fd, void* out, size_t size, uint64_t offset) {
    auto* p = static_cast<char*>(out);
    for (size_t done = 0; done < size;) {
        ssize_t const n = ::pread(fd, p + done, size - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        if (n == 0) return -1;
        done += static_cast<size_t>(n);
    }
    return 0;
}

// 0 or an errno (a write that takes nothing: EIO).
inline int pwrite_whole(int fd, void const* data, size_t size, uint64_t offset) {
    auto const* p = static_cast<char const*>(data);
    for (size_t done = 0; done < size;) {
        ssize_t const n = ::pwrite(fd, p + done, size - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        if (n == 0) return EIO;
        done += static_cast<size_t>(n);
    }
    return 0;
}

}  // namespace qmer::io::detail
