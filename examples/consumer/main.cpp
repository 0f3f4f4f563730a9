// Screens reads against one reference with qmer's header-only core, as a C++ program using the
// installed package would: the canonical k-mers of the reference go into an expandable quotient
// filter, and each read reports how many of its k-mers the filter holds.
//
//   qmer_consumer K REFERENCE READ...   prints "READ<TAB>kmers<TAB>hits" per read
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <core/kmer/hash.hpp>
#include <core/kmer/scanner.hpp>
#include <core/qf/concurrent/expandable.hpp>

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: qmer_consumer K REFERENCE READ...\n");
        return 2;
    }
    try {
        qmer::kmer_scanner const scanner(static_cast<unsigned>(std::stoul(argv[1])));
        qmer::kmer_hasher const hash{};
        qmer::qf::expandable_filter filter;
        scanner.for_each(argv[2], [&](uint64_t kmer, size_t) { filter.insert(hash(kmer)); });
        for (int i = 3; i < argc; ++i) {
            size_t kmers = 0, hits = 0;
            scanner.for_each(argv[i], [&](uint64_t kmer, size_t) {
                ++kmers;
                hits += filter.contains(hash(kmer));
            });
            std::printf("%s\t%zu\t%zu\n", argv[i], kmers, hits);
        }
    } catch (std::exception const& e) {
        std::fprintf(stderr, "qmer_consumer: %s\n", e.what());
        return 1;
    }
    return 0;
}
