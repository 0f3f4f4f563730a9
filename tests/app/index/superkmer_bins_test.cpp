// The build from super-k-mer bins (app/index/superkmer_bins.hpp), against oracles computed k-mer
// by k-mer: a window is marked exactly when its own k-mers have more distinct fingerprints than the
// threshold, and the fill hands over every k-mer's fingerprint once, in order (the marked windows'
// by their plain hash): the set the scheme's hashing gives over the same sequences with those
// marks. Whatever keeps the records (memory, the scratch file, both) and however many threads add
// them.

#include "app/index/superkmer_bins.hpp"

#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/qf/stored/writer.hpp"
#include "core/qf/three_bit_layout.hpp"

namespace {

using qmer::local_kmer_hashing;
using qmer::app::binned_store;
using qmer::app::chunk_arena;
using qmer::app::overloaded_windows;
using qmer::app::superkmer_bins;

std::string random_bases(std::mt19937_64& rng, size_t n) {
    std::string s(n, 'A');
    for (auto& c : s) c = "ACGT"[rng() % 4];
    return s;
}

// Random sequence with N runs, a homopolymer, and mutated copies of one unit (crowded windows).
std::vector<std::string> references(uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::string> refs;
    for (int i = 0; i < 6; ++i) {
        std::string s = random_bases(rng, 30000);
        for (int j = 0; j < 5; ++j) s[rng() % s.size()] = 'N';
        refs.push_back(s);
    }
    refs.push_back(std::string(400, 'A') + random_bases(rng, 100));
    std::string const unit = random_bases(rng, 300);
    for (int copy = 0; copy < 60; ++copy) {
        std::string mutated = unit;
        for (int j = 0; j < 6; ++j) mutated[rng() % mutated.size()] = "ACGT"[rng() % 4];
        refs.push_back(mutated);
    }
    return refs;
}

struct setup {
    explicit setup(uint64_t slots = 200000) : g(qmer::qf::geometry::with_slots(slots, 9)) {}
    qmer::qf::geometry g;
    unsigned bits = qmer::locality_window_bits(g.canonical_slots());
    local_kmer_hashing hashing{31, 7, 20, bits, {}, qmer::level_window_extra_bits};
};

// The marks the rule gives: windows whose own k-mers have more distinct fingerprints.
std::vector<uint64_t> oracle_marks(setup const& s, std::vector<std::string> const& refs,
                                   double threshold) {
    std::map<uint64_t, std::set<uint64_t>> per_window;
    for (auto const& seq : refs)
        s.hashing.scanner().for_each(seq, [&](uint64_t canonical, uint64_t minimizer) {
            uint64_t const spread = qmer::minimizer_spread(minimizer);
            per_window[s.hashing.window_of(spread)].insert(
                s.g.fingerprint(s.hashing.local_hash(canonical, spread)));
        });
    std::vector<uint64_t> bits(((uint64_t{1} << s.bits) + 63) / 64, 0);
    for (auto const& [w, fps] : per_window)
        if (static_cast<double>(fps.size()) > threshold) bits[w / 64] |= uint64_t{1} << (w % 64);
    return bits;
}

std::vector<uint64_t> oracle_fingerprints(setup const& s, std::vector<std::string> const& refs,
                                          std::vector<uint64_t> const& marks) {
    local_kmer_hashing const marked(31, 7, 20, s.bits, marks, qmer::level_window_extra_bits);
    std::set<uint64_t> fps;
    for (auto const& seq : refs)
        marked.for_each(seq, [&](uint64_t h) { fps.insert(s.g.fingerprint(h)); });
    return {fps.begin(), fps.end()};
}

struct built {
    std::vector<uint64_t> marks;
    std::vector<uint64_t> fps;
    uint64_t file_bytes = 0;
    uint64_t kmers = 0;
};

built build(setup const& s, std::vector<std::string> const& refs, double threshold,
            uint64_t memory_budget, unsigned threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    superkmer_bins bins(s.hashing, s.g, memory_budget,
                        std::filesystem::temp_directory_path().string(), 64 << 10);
    built out;
    std::atomic<uint64_t> kmers{0};
    // Pieces of 1000 k-mer starts, as the reading pipeline cuts long records, from many tasks.
    tbb::parallel_for(size_t{0}, refs.size(), [&](size_t r) {
        std::string_view const seq = refs[r];
        for (size_t start = 0; start + 31 <= seq.size(); start += 1000)
            kmers += bins.add(seq.substr(start, 1000 + 30));
    });
    out.kmers = kmers.load();
    overloaded_windows marks;
    marks.bits.assign(((uint64_t{1} << s.bits) + 63) / 64, 0);
    bins.mark(marks, threshold);
    bool const complete = bins.append_to(
        [&](std::span<uint64_t const> fps) {
            out.fps.insert(out.fps.end(), fps.begin(), fps.end());
            return fps.size();
        },
        marks, threads);
    EXPECT_TRUE(complete);
    out.marks = marks.bits;
    out.file_bytes = bins.file_bytes();
    return out;
}

uint64_t scanned_kmers(std::vector<std::string> const& refs) {
    uint64_t n = 0;
    for (auto const& seq : refs)
        qmer::kmer_scanner(31).for_each(seq, [&](uint64_t, size_t) { ++n; });
    return n;
}

TEST(superkmer_bins, marks_and_fingerprints_match_the_kmer_by_kmer_oracle) {
    setup const s;
    auto const refs = references(1);
    uint64_t const kmers = scanned_kmers(refs);
    // The real threshold (the copies' windows only), and a low one that marks many windows.
    for (double const threshold : {qmer::overload_threshold(s.g.canonical_slots(), s.bits), 8.0}) {
        auto const marks = oracle_marks(s, refs, threshold);
        auto const fps = oracle_fingerprints(s, refs, marks);
        size_t marked = 0;
        for (uint64_t w : marks) marked += static_cast<size_t>(std::popcount(w));
        EXPECT_GT(marked, 0u) << "the test must exercise the plain hashes";
        // All in memory, all in the scratch file, and split between them; 1 and 8 threads.
        for (uint64_t const budget : {uint64_t{1} << 30, uint64_t{0}, uint64_t{256} << 10}) {
            for (unsigned const threads : {1u, 8u}) {
                auto const b = build(s, refs, threshold, budget, threads);
                EXPECT_EQ(b.kmers, kmers);
                EXPECT_EQ(b.marks, marks) << "threshold " << threshold << " budget " << budget;
                EXPECT_EQ(b.fps, fps)
                    << "threshold " << threshold << " budget " << budget << " threads " << threads;
                if (budget == 0) {
                    EXPECT_GT(b.file_bytes, 0u);
                }
                if (budget == uint64_t{1} << 30) {
                    EXPECT_EQ(b.file_bytes, 0u);
                }
            }
        }
    }
}

// mark() decodes each distinct super-k-mer of a crowded window once: copies of one record are
// one, and records that differ in a single base, their k-mer count or their first k-mer are not.
TEST(superkmer_bins, repeated_and_near_repeated_superkmers_match_the_oracle) {
    setup const s;
    std::mt19937_64 rng(4);
    std::string const unit = random_bases(rng, 600);
    std::vector<std::string> refs(150, unit);   // exact copies: the same records
    for (size_t i = 0; i < unit.size(); ++i) {  // one base changed, at every offset
        std::string near = unit;
        near[i] = near[i] == 'A' ? 'C' : 'A';
        refs.push_back(near);
    }
    refs.push_back(unit.substr(1));                   // the same bases, records cut elsewhere
    refs.push_back(unit.substr(0, unit.size() - 1));  // a last record one k-mer shorter
    double const threshold = 8.0;
    auto const marks = oracle_marks(s, refs, threshold);
    auto const fps = oracle_fingerprints(s, refs, marks);
    size_t marked = 0;
    for (uint64_t w : marks) marked += static_cast<size_t>(std::popcount(w));
    ASSERT_GT(marked, 0u) << "the copies' windows must be crowded";
    auto const b = build(s, refs, threshold, uint64_t{1} << 30, 4);
    EXPECT_EQ(b.marks, marks);
    EXPECT_EQ(b.fps, fps);
}

// Records take ~2.3 bytes a k-mer position on random sequence, as the plan expects.
TEST(superkmer_bins, random_sequence_takes_what_the_plan_expects) {
    setup const s;
    std::mt19937_64 rng(2);
    std::vector<std::string> const refs{random_bases(rng, 400000)};
    auto const b = build(s, refs, 1e9, 0, 2);
    double const per_position = static_cast<double>(b.file_bytes) / static_cast<double>(b.kmers);
    double const expected = superkmer_bins::expected_bytes_per_position(31, 20);
    EXPECT_NEAR(per_position, expected, 0.15 * expected);
}

// Bins of more fingerprints than the fill hands the sink at once (it widens each bin's 4-byte
// offsets in pieces of 2048): every fingerprint once, in order, across the pieces and the bins.
TEST(superkmer_bins, bins_larger_than_a_piece_reach_the_sink_whole) {
    setup const s(2600000);
    std::mt19937_64 rng(6);
    std::vector<std::string> const refs{random_bases(rng, 2500000)};
    std::vector<uint64_t> expected;
    s.hashing.for_each(refs[0], [&](uint64_t h) { expected.push_back(s.g.fingerprint(h)); });
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());

    superkmer_bins bins(s.hashing, s.g, uint64_t{1} << 30, ".", 64 << 10);
    bins.add(refs[0]);
    overloaded_windows marks;
    marks.bits.assign(((uint64_t{1} << s.bits) + 63) / 64, 0);
    bins.mark(marks, 1e9);
    std::vector<uint64_t> got;
    size_t whole_pieces = 0;
    bool const complete = bins.append_to(
        [&](std::span<uint64_t const> fps) {
            whole_pieces += fps.size() == 2048;
            got.insert(got.end(), fps.begin(), fps.end());
            return fps.size();
        },
        marks, 2);
    EXPECT_TRUE(complete);
    EXPECT_GT(whole_pieces, 100u) << "the bins must be larger than a piece";
    EXPECT_TRUE(got == expected) << got.size() << " fingerprints for " << expected.size();
}

// A sink that stops taking (a first level that filled up) makes the fill report it.
TEST(superkmer_bins, a_level_that_fills_up_is_reported) {
    setup const s;
    auto const refs = references(3);
    superkmer_bins bins(s.hashing, s.g, uint64_t{1} << 30, ".", 0);
    for (auto const& seq : refs) bins.add(seq);
    overloaded_windows marks;
    marks.bits.assign(((uint64_t{1} << s.bits) + 63) / 64, 0);
    bins.mark(marks, 1e9);
    size_t room = 1000;
    bool const complete = bins.append_to(
        [&](std::span<uint64_t const> fps) {
            size_t const took = std::min(room, fps.size());
            room -= took;
            return took;
        },
        marks, 2);
    EXPECT_FALSE(complete);
}

// The level written with each bin's middle by the thread that sorted it (level_writer_sink,
// core/qf/stored/segments.hpp) is the one writer's, word for word: at fills where cuts are many
// and few, on 2 and 8 threads, with the records in memory and in the scratch file, and when the
// level fills up part way (max_elements), where both stop at the same fingerprint.
TEST(superkmer_bins, a_level_written_in_parallel_is_the_one_writers) {
    std::mt19937_64 rng(8);
    std::vector<std::string> const refs{random_bases(rng, 1500000)};
    for (uint64_t const slots : {1600000u, 3000000u}) {
        setup const s(slots);
        qmer::qf::rank_select::shape const shape{
            s.g.canonical_slots(),
            s.g.canonical_slots() + qmer::qf::overflow_slots_for(s.g.canonical_slots()),
            s.g.remainder_bits};
        for (uint64_t const room : {~uint64_t{0}, uint64_t{700000}}) {
            for (uint64_t const budget : {uint64_t{1} << 30, uint64_t{0}}) {
                auto const write = [&](bool parallel, unsigned threads) {
                    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                              threads);
                    superkmer_bins bins(s.hashing, s.g, budget,
                                        std::filesystem::temp_directory_path().string(), 64 << 10);
                    bins.add(refs[0]);
                    overloaded_windows marks;
                    marks.bits.assign(((uint64_t{1} << s.bits) + 63) / 64, 0);
                    bins.mark(marks, 1e9);
                    qmer::qf::rank_select_writer writer(shape, room);
                    std::vector<uint64_t> words;
                    auto const keep = [&](std::span<uint64_t const> w) {
                        words.insert(words.end(), w.begin(), w.end());
                    };
                    bool const complete =
                        parallel ? bins.append_to(qmer::app::level_writer_sink{writer, keep}, marks,
                                                  threads)
                                 : bins.append_to(
                                       [&](std::span<uint64_t const> fps) {
                                           return writer.append(fps, keep);
                                       },
                                       marks, threads);
                    EXPECT_EQ(complete, room == ~uint64_t{0});
                    writer.finish(keep);
                    return std::pair{words, writer.size()};
                };
                auto const one = write(false, 2);
                for (unsigned const threads : {2u, 8u}) {
                    auto const split = write(true, threads);
                    EXPECT_EQ(split.second, one.second);
                    EXPECT_TRUE(split.first == one.first)
                        << "slots " << slots << " room " << room << " budget " << budget
                        << " threads " << threads;
                }
            }
        }
    }
}

// A store's values of each bin, appended by `threads` threads at once (thread t's value i of bin b
// is b << 24 | t << 16 | i), and what the store held at the end of the appends.
uint64_t append_values(binned_store& store, uint32_t bins, unsigned threads, uint32_t each) {
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            auto& mine = store.mine();
            for (uint32_t i = 0; i < each; ++i)
                for (uint32_t b = 0; b < bins; ++b) {
                    uint32_t const value = b << 24 | t << 16 | i;
                    store.append<sizeof value>(mine, b, &value, sizeof value);
                }
            binned_store::publish();
        });
    for (auto& w : workers) w.join();
    return store.held_bytes();
}

// The same, then flushed.
void fill_store(binned_store& store, uint32_t bins, unsigned threads, uint32_t each) {
    (void)append_values(store, bins, threads, each);
    store.flush_all();
}

// The store's bins read back one by one, each freed as it is read: every bin must come back
// whole, in each thread's order, whatever the other bins' freeing did.
void check_store_reads(binned_store& store, uint32_t bins, unsigned threads, uint32_t each) {
    std::vector<uint8_t> bytes;
    for (uint32_t b = 0; b < bins; ++b) {
        store.read(b, true, bytes);
        ASSERT_EQ(bytes.size(), size_t{threads} * each * sizeof(uint32_t)) << "bin " << b;
        std::vector<uint32_t> next(threads, 0);
        for (size_t at = 0; at < bytes.size(); at += sizeof(uint32_t)) {
            uint32_t v;
            std::memcpy(&v, bytes.data() + at, sizeof v);
            unsigned const t = (v >> 16) & 0xFF;
            ASSERT_EQ(v >> 24, b) << "a value of another bin";
            ASSERT_LT(t, threads);
            ASSERT_EQ(v & 0xFFFF, next[t]++) << "bin " << b << ", thread " << t;
        }
    }
}

void check_store_round_trip(binned_store& store, uint32_t bins, unsigned threads, uint32_t each) {
    fill_store(store, bins, threads, each);
    check_store_reads(store, bins, threads, each);
}

// A store whose first buffers are small takes a few hundred bytes per bin and thread from the
// threads' own slabs, and no page of the arena per bin and thread: with an arena of no room, a
// few values per bin never reach the scratch file.
TEST(binned_store, few_values_per_bin_take_no_page_each) {
    chunk_arena none(0);
    auto no_file = []() -> qmer::io::spill_file& {
        throw std::runtime_error("a few values per bin went to the scratch file");
    };
    binned_store store(64, 16 * chunk_arena::page, none, 0, no_file, 256);
    check_store_round_trip(store, 64, 3, 150);  // 600 bytes: buffers of 256 and 512
}

// Buffers growing from slab slices to arena chunks (256 bytes to 16 KiB) keep every value, and
// freeing a bin gives back its arena chunks only: the slab slices of the bins not yet read stay.
// (An arena without groups has no runs: every bin's values go to each thread's buffers.)
TEST(binned_store, buffers_growing_from_slabs_to_the_arena_keep_every_value) {
    constexpr uint32_t bins = 8;
    chunk_arena arena(1024 * chunk_arena::page);
    auto no_file = []() -> qmer::io::spill_file& {
        throw std::runtime_error("the arena had room");
    };
    binned_store store(bins, 16 * chunk_arena::page, arena, 0, no_file, 256);
    check_store_round_trip(store, bins, 2, 20000);  // 80 KB a bin and thread
}

// What a store holds once its values are all in does not grow with the threads that appended
// them: each thread's last, partly filled page of every bin (half a page per bin and thread on
// average) is packed with the others. The same values in 64 bins from 1 and from 16 threads (a
// page and 1904 bytes per bin and thread) take at most a page per bin more with 16; and the
// values come back whole, every page given back once every bin is read.
TEST(binned_store, what_it_holds_after_the_appends_does_not_grow_with_the_threads) {
    constexpr uint32_t bins = 64;
    constexpr size_t page = chunk_arena::page;
    auto no_file = []() -> qmer::io::spill_file& {
        throw std::runtime_error("the arena had room");
    };
    auto held = [&](unsigned threads, uint32_t each) {
        chunk_arena arena(4096 * page, bins, 64 * page);
        binned_store store(bins, 4 * page, arena, 0, no_file);
        fill_store(store, bins, threads, each);
        uint64_t const bytes = store.held_bytes();
        check_store_reads(store, bins, threads, each);
        EXPECT_EQ(store.held_bytes(), 0u) << "every bin read and released, " << threads;
        return bytes;
    };
    uint64_t const one = held(1, 16 * 1500);
    uint64_t const sixteen = held(16, 1500);
    uint64_t const values = uint64_t{bins} * 16 * 1500 * sizeof(uint32_t);
    EXPECT_GE(one, values);
    EXPECT_LE(one, values + bins * page);
    EXPECT_LE(sixteen, one + bins * page) << "16 threads' last pages of each bin held";
}

// A bin's run that fills its range (4 pages) is closed for every thread: the values after it go
// to each thread's own chunks, and every value comes back, each thread's in the order it appended
// them, though 2 threads wrote each run at once (and 2 more had buffers of their own throughout).
TEST(binned_store, a_full_run_sends_the_rest_to_each_threads_buffers) {
    constexpr uint32_t bins = 8;
    constexpr size_t page = chunk_arena::page;
    chunk_arena arena(1024 * page, 2 * bins, 4 * page);
    auto no_file = []() -> qmer::io::spill_file& {
        throw std::runtime_error("the arena had room");
    };
    binned_store store(bins, 16 * page, arena, bins, no_file);  // groups 8-15: none before
    fill_store(store, bins, 4, 6000);                           // 96 KB a bin, 16 KiB in its run
    for (uint32_t b = 0; b < bins; ++b) {
        EXPECT_EQ(arena.run_bytes(b), 0u);
        EXPECT_GT(arena.run_bytes(bins + b), 4 * page - 128) << "the run filled its range";
        EXPECT_LE(arena.run_bytes(bins + b), 4 * page);
    }
    check_store_reads(store, bins, 4, 6000);
}

// What 16 threads hold while they append is what one thread holds, but their staging lines and
// bookkeeping (under 256 bytes a bin and thread) and the last pages of the threads with buffers
// of their own (two): not a page per bin and thread, which each thread's own half-filled last
// page of every bin took. The same values in 256 bins from 1 thread and from 16 at once.
TEST(binned_store, what_threads_hold_while_appending_is_no_page_per_bin_and_thread) {
    constexpr uint32_t bins = 256;
    constexpr size_t page = chunk_arena::page;
    constexpr uint32_t each = 300;  // 1200 bytes a bin and thread
    auto no_file = []() -> qmer::io::spill_file& {
        throw std::runtime_error("the arena had room");
    };
    auto held = [&](unsigned threads, uint32_t values) {
        chunk_arena arena(16384 * page, bins, 64 * page);  // room for 16 threads' own buffers
        binned_store store(bins, 2 * page, arena, 0, no_file);
        uint64_t const bytes = append_values(store, bins, threads, values);
        store.flush_all();
        check_store_reads(store, bins, threads, values);
        return bytes;
    };
    uint64_t const one = held(1, 16 * each);
    uint64_t const sixteen = held(16, each);
    uint64_t const values = uint64_t{bins} * 16 * each * sizeof(uint32_t);
    EXPECT_GE(one, values);
    EXPECT_LE(one, values + bins * page + bins * 256);
    EXPECT_LE(sixteen, one + uint64_t{bins} * (2 * page + 15 * 256))
        << "each thread's pages of every bin";
}

// Runs: a group's run grows from the start of its range, by any amount, each extension after the
// last, the budget paying for each page as the run reaches it; a run that has no room (its range,
// or the budget) is closed for good, and that group's chunks come from the shared range.
TEST(chunk_arena, runs_grow_in_their_range_and_close_for_good) {
    constexpr size_t page = chunk_arena::page;
    chunk_arena arena(6 * page, 2, 2 * page);
    ASSERT_TRUE(arena.has_runs());
    uint8_t* const a = arena.extend(0, 100);
    ASSERT_EQ(a, arena.run_of(0));
    EXPECT_EQ(arena.extend(0, 4000), a + 100);
    EXPECT_EQ(arena.extend(0, 4092), a + 4100) << "over a page boundary";
    EXPECT_EQ(arena.run_bytes(0), 8192u);
    EXPECT_EQ(arena.extend(0, 1), nullptr) << "the range is full";
    EXPECT_EQ(arena.extend(0, 0), nullptr) << "closed for good";
    EXPECT_EQ(arena.run_bytes(0), 8192u);
    uint8_t* const shared = arena.take(0, page);  // the budget's third page, not in the range
    ASSERT_NE(shared, nullptr);
    EXPECT_TRUE(shared >= a + 2 * page || shared + page <= a);
    // The budget: 6 pages, 3 paid; allowed 4, group 1's run gets one page, not a second.
    arena.allow(4 * page);
    EXPECT_NE(arena.extend(1, page), nullptr);
    EXPECT_EQ(arena.extend(1, 1), nullptr) << "allow() caps the pages a run reaches";
    arena.allow(6 * page);
    EXPECT_EQ(arena.extend(1, 1), nullptr) << "closed by the budget: for good";
    EXPECT_EQ(arena.run_bytes(1), page);
    EXPECT_NE(arena.take(1, page), nullptr);
    EXPECT_NE(arena.take(1, page), nullptr);
    EXPECT_EQ(arena.take(1, page), nullptr) << "the budget, whole";

    chunk_arena shared_only(6 * page);
    EXPECT_FALSE(shared_only.has_runs());
    EXPECT_EQ(shared_only.extend(0, 1), nullptr);
}

// The arena hands out disjoint whole pages: each group's from its own range while it has room,
// then from the shared range, never past the budget or what allow() lets out.
TEST(chunk_arena, chunks_are_disjoint_and_within_the_budget) {
    constexpr size_t page = chunk_arena::page;
    chunk_arena arena(64 * page, 4, 4 * page);
    std::vector<std::pair<uint8_t*, size_t>> taken;
    auto take = [&](uint32_t group, size_t bytes) {
        uint8_t* const at = arena.take(group, bytes);
        if (at != nullptr) taken.emplace_back(at, (bytes + page - 1) / page * page);
        return at;
    };
    uint8_t* const a = take(0, 3 * page);
    uint8_t* const b = take(0, 1);  // rounded up to a page: the group's range is full
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b, a + 3 * page);
    uint8_t* const c = take(0, page);  // no room left in group 0: the shared range
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(c >= b + page || c + page <= a);
    while (take(1 + static_cast<uint32_t>(taken.size() % 3), page) != nullptr) {
    }
    size_t handed = 0;
    for (auto const& [at, bytes] : taken) handed += bytes;
    EXPECT_EQ(handed, 64 * page) << "the budget, whole";
    std::sort(taken.begin(), taken.end());
    for (size_t i = 1; i < taken.size(); ++i)
        EXPECT_LE(taken[i - 1].first + taken[i - 1].second, taken[i].first) << "overlap at " << i;
    for (auto const& [at, bytes] : taken) std::memset(at, 0xab, bytes);  // all writable

    chunk_arena limited(64 * page, 2, 8 * page);
    limited.allow(2 * page);
    EXPECT_NE(limited.take(0, page), nullptr);
    EXPECT_NE(limited.take(1, page), nullptr);
    EXPECT_EQ(limited.take(1, page), nullptr) << "allow() caps what is handed out";
}

// give_back() empties exactly the given groups' pages: a group's shared-range chunks at once, its
// own range with its batch's (8 neighbouring groups) once all of them are given back. Freed pages
// read as zero; every other group's bytes are as they were written.
TEST(chunk_arena, giving_back_a_group_frees_its_pages_only) {
    constexpr size_t page = chunk_arena::page;
    constexpr uint32_t n = 10;               // batches of groups 0-7 and 8-9
    for (uint32_t const groups : {n, 0u}) {  // 0: the shared range only
        chunk_arena arena(64 * page, groups, 2 * page);
        std::vector<std::vector<uint8_t*>> chunks(n);
        for (int round = 0; round < 3; ++round)  // the third goes to the shared range
            for (uint32_t g = 0; g < n; ++g) {
                uint8_t* const at = arena.take(g, page);
                ASSERT_NE(at, nullptr);
                std::memset(at, static_cast<int>(g + 1), page);
                chunks[g].push_back(at);
            }
        auto give_back = [&](uint32_t g) {
            arena.give_back(g, [&](auto&& give) {
                for (uint8_t* at : chunks[g]) give(at, page);
            });
        };
        auto check = [&](std::vector<bool> const& freed, char const* when) {
            for (uint32_t g = 0; g < n; ++g)
                for (size_t c = 0; c < chunks[g].size(); ++c) {
                    // With groups, a group's own chunks (the first two) wait for its batch.
                    bool const gone = freed[g] || (c == 2 && g == 1);
                    EXPECT_EQ(chunks[g][c][0], gone ? 0 : g + 1)
                        << when << ": groups " << groups << " group " << g << " chunk " << c;
                }
        };
        give_back(1);
        if (groups == 0) {
            std::vector<bool> freed(n, false);
            freed[1] = true;
            check(freed, "group 1 given back, shared range only");
            continue;
        }
        check(std::vector<bool>(n, false), "group 1 given back, its batch not");
        give_back(8);
        give_back(9);
        std::vector<bool> freed(n, false);
        freed[8] = freed[9] = true;
        check(freed, "the second batch given back");
        for (uint32_t g : {0u, 2u, 3u, 4u, 5u, 6u, 7u}) give_back(g);
        check(std::vector<bool>(n, true), "every group given back");
    }
}

// Threads taking for the same groups at once get disjoint chunks (the counters are CASed).
TEST(chunk_arena, concurrent_takes_never_overlap) {
    constexpr size_t page = chunk_arena::page;
    chunk_arena arena(4096 * page, 8, 64 * page);
    std::vector<std::thread> threads;
    std::vector<std::vector<uint8_t*>> got(16);
    for (unsigned t = 0; t < 16; ++t)
        threads.emplace_back([&, t] {
            for (uint8_t* at; (at = arena.take(t % 8, page)) != nullptr;) {
                std::memset(at, static_cast<int>(t + 1), page);
                got[t].push_back(at);
            }
        });
    for (auto& t : threads) t.join();
    size_t total = 0;
    for (unsigned t = 0; t < 16; ++t) {
        total += got[t].size();
        for (uint8_t* at : got[t])
            EXPECT_TRUE(at[0] == t + 1 && at[page - 1] == t + 1) << "a chunk written twice";
    }
    EXPECT_EQ(total, 4096u);
}

}  // namespace
