// Cost per fingerprint of writing the rank-and-select layout from sorted fingerprints
// (core/qf/stored/writer.hpp, rank_select_writer): the last phase of `qmer index`'s sorted build
// runs this loop on one thread while the others sort the next bins, so it bounds that phase.
// Beside it, in the same process and interleaved, the floor of any such writer: the same
// placement (each fingerprint at the first free slot at or after its quotient) with one OR of the
// remainder into a buffer of the layout's size and nothing else. A documented harness, not Google
// Benchmark: the fingerprints are made and sorted once, then each subject runs 3 times, rotating,
// and the fastest run counts.
//
// Fingerprints: the harness's present keys (bench/qf/harness.hpp, splitmix64 of a counter), reduced
// to the table's fingerprint space and sorted; `--fill` of the canonical slots. One thread. Usage:
//   qf_rank_select_writer_bench [--slots 50000000] [--r 11] [--fill 0.95] [--csv FILE]

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench/qf/harness.hpp"
#include "core/qf/stored/writer.hpp"
#include "core/qf/three_bit_layout.hpp"

namespace {

using namespace qmer;

struct options {
    uint64_t slots = 50'000'000;
    unsigned r = 11;
    double fill = 0.95;
    std::string csv;
};

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string const a = argv[i];
        if (a == "--slots")
            o.slots = std::strtoull(argv[i + 1], nullptr, 10);
        else if (a == "--r")
            o.r = static_cast<unsigned>(std::strtoul(argv[i + 1], nullptr, 10));
        else if (a == "--fill")
            o.fill = std::strtod(argv[i + 1], nullptr);
        else if (a == "--csv")
            o.csv = argv[i + 1];
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            std::exit(2);
        }
    }
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    options const o = parse(argc, argv);
    qf::geometry const g = qf::geometry::with_slots(o.slots, o.r);
    auto const n = static_cast<size_t>(o.fill * static_cast<double>(o.slots));
    std::vector<uint64_t> fps(n);
    for (size_t i = 0; i < n; ++i) fps[i] = bench::present_key(i) % g.fingerprint_space();
    std::sort(fps.begin(), fps.end());
    fps.erase(std::unique(fps.begin(), fps.end()), fps.end());
    qf::rank_select::shape const shape{g.canonical_slots(),
                                       g.canonical_slots() + qf::overflow_slots_for(o.slots), o.r};
    std::vector<uint64_t> out(shape.words());

    // The writer, its blocks copied out as the sorted build keeps them.
    auto writer = [&]() -> uint64_t {
        size_t at = 0;
        auto keep = [&](std::span<uint64_t const> c) {
            std::memcpy(out.data() + at, c.data(), c.size_bytes());
            at += c.size();
        };
        qf::rank_select_writer w(shape);
        constexpr size_t piece = size_t{1} << 19;  // a bin's worth at a time
        for (size_t i = 0; i < fps.size(); i += piece)
            w.append(std::span<uint64_t const>(fps).subspan(i, std::min(piece, fps.size() - i)),
                     keep);
        return w.finish(keep);
    };
    // The floor: placement and one OR per fingerprint at its remainder's bit.
    auto floor = [&]() -> uint64_t {
        std::fill(out.begin(), out.end(), 0);
        uint64_t next = 0;
        for (uint64_t fp : fps) {
            uint64_t const q = fp >> o.r;
            uint64_t const pos = std::max(q, next);
            next = pos + 1;
            uint64_t const bit = pos * (o.r + 2);
            out[(bit / 64) % out.size()] |= (fp & ((uint64_t{1} << o.r) - 1)) << (bit % 64);
        }
        return next;
    };

    double best[2] = {1e300, 1e300};
    uint64_t sink = 0;
    for (int round = 0; round < 3; ++round) {
        for (int subject = 0; subject < 2; ++subject) {
            auto const t0 = bench::clock_type::now();
            sink += subject == 0 ? writer() : floor();
            best[subject] = std::min(best[subject], bench::seconds_since(t0));
        }
    }
    double const per[2] = {best[0] * 1e9 / static_cast<double>(fps.size()),
                           best[1] * 1e9 / static_cast<double>(fps.size())};
    std::printf("subject,fingerprints,slots,r,fill,ns_per_fingerprint\n");
    std::printf("writer,%zu,%" PRIu64 ",%u,%.2f,%.2f\n", fps.size(), o.slots, o.r, o.fill, per[0]);
    std::printf("floor,%zu,%" PRIu64 ",%u,%.2f,%.2f\n", fps.size(), o.slots, o.r, o.fill, per[1]);
    std::printf("# writer / floor: %.2fx (checksum %" PRIu64 ")\n", per[0] / per[1], sink % 10);
    if (!o.csv.empty()) {
        std::ofstream f(o.csv);
        f << "subject,fingerprints,slots,r,fill,ns_per_fingerprint\n"
          << "writer," << fps.size() << ',' << o.slots << ',' << o.r << ',' << o.fill << ','
          << per[0] << "\nfloor," << fps.size() << ',' << o.slots << ',' << o.r << ',' << o.fill
          << ',' << per[1] << '\n';
    }
    return 0;
}
