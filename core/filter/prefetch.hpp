#pragma once
// A software prefetch the optimiser keeps. GCC's mod/ref analysis sees no side effect in
// __builtin_prefetch, so it takes a prefetch() that does nothing else for a pure function and
// deletes every call to it that it did not inline, so the query loop would wait on every miss
// (bench/qf/LOOKUP_FILL.md). An asm volatile is a side effect it cannot remove.

namespace qmer {

inline void prefetch_for_read(void const* p) noexcept {
#if defined(__x86_64__) || defined(__i386__)
    asm volatile("prefetcht0 %0" : : "m"(*static_cast<char const*>(p)));
#else
    __builtin_prefetch(p, 0, 3);
    asm volatile("" : : "r"(p));
#endif
}

}  // namespace qmer
