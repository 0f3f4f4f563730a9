#pragma once
// Whether another qmer process is answering from an index file now, told by an advisory lock: a
// query that reads an index into private memory holds an exclusive flock() on the file while it
// answers, so a second query of the same index finds it held and answers from the shared mapping
// instead of making a second private copy. Six queries of one 4 GiB index on a 23 GiB node each
// copied it, and the kernel's OOM killer ended one; with the lock one copies and the others share
// the page cache's one copy.
//
// The lock is advisory and only qmer takes it: nothing is refused because of it, and a file system
// whose locks fail (some network ones) makes every query take its own decision by memory alone.

#include <optional>
#include <string>

namespace qmer::io {

class index_exclusive_use {
  public:
    // Takes the exclusive lock on `path` without waiting: nullopt when another process holds it
    // (or the file cannot be opened, which the index reader reports on its own).
    static std::optional<index_exclusive_use> try_take(std::string const& path);

    index_exclusive_use(index_exclusive_use&& other) noexcept;
    index_exclusive_use& operator=(index_exclusive_use&& other) noexcept;
    index_exclusive_use(index_exclusive_use const&) = delete;
    index_exclusive_use& operator=(index_exclusive_use const&) = delete;
    ~index_exclusive_use();  // closing the descriptor releases the lock

  private:
    explicit index_exclusive_use(int fd) noexcept : fd_(fd) {}
    int fd_ = -1;
};

}  // namespace qmer::io
