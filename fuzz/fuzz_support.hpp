#pragma once
// Helpers shared by the fuzz targets: a file that holds the fuzz input (the readers under test take
// paths, as qmer's commands do), and a way to turn an oracle mismatch or a foreign exception into a
// crash that libFuzzer records with its input.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

namespace qmer::fuzz {

// Prints why and aborts: libFuzzer saves the input as crash-<sha1> and exits non-zero.
[[noreturn]] inline void fail(std::string const& why) {
    std::fprintf(stderr, "qmer fuzz oracle: %s\n", why.c_str());
    std::fflush(stderr);
    std::abort();
}

// For catch (...) blocks: names the exception that escaped (only qmer's named errors may).
[[noreturn]] inline void fail_with_current_exception(char const* where) {
    try {
        throw;
    } catch (std::exception const& e) {
        fail(std::string(where) + ": unexpected exception " + typeid(e).name() + ": " + e.what());
    } catch (...) {
        fail(std::string(where) + ": unexpected exception of a non-std type");
    }
}

// An anonymous in-memory file (memfd) reachable by path as /proc/self/fd/N. Each open() of that
// path is a fresh open file description at offset 0, so htslib, mmap and std::ifstream all read it
// like a regular file (it is one: S_ISREG holds), and nothing touches the disk. One per process:
// set() replaces the contents for each fuzz input.
class memory_file {
  public:
    memory_file() {
        fd_ = ::memfd_create("qmer-fuzz-input", MFD_CLOEXEC);
        if (fd_ < 0) fail("memfd_create failed");
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    ~memory_file() { ::close(fd_); }
    memory_file(memory_file const&) = delete;
    memory_file& operator=(memory_file const&) = delete;

    std::string const& set(uint8_t const* data, size_t size) {
        if (::ftruncate(fd_, 0) != 0) fail("ftruncate on the memfd failed");
        size_t done = 0;
        while (done < size) {
            ssize_t const n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
            if (n <= 0) fail("pwrite on the memfd failed");
            done += static_cast<size_t>(n);
        }
        return path_;
    }

    std::string const& path() const noexcept { return path_; }

  private:
    int fd_ = -1;
    std::string path_;
};

}  // namespace qmer::fuzz
