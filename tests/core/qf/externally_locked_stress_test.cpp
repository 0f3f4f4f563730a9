// Oversubscribed stress tests of the externally locked quotient filter (label concurrency, run
// under ThreadSanitizer): the shared typed suite, and clusters that straddle lock stripes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "core/filter/contract_suite.hpp"
#include "core/qf/externally_locked.hpp"
#include "core/qf/externally_locked_maker.hpp"

using qmer::insert_result;
using qmer::qf::externally_locked;

namespace qmer::test {
using el_types = ::testing::Types<externally_locked>;
INSTANTIATE_TYPED_TEST_SUITE_P(externally_locked, filter_concurrency, el_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_contract);  // in externally_locked_test
}  // namespace qmer::test

namespace {

// All keys have canonical slots in 4096 - 160 .. 4096 + 96: one dense region whose clusters cross
// the boundary of the first two lock stripes, so operations take two stripes and restart from the
// lower one. 16 threads on 2 cores insert overlapping slices and query what they inserted; at the
// end the table must hold exactly the distinct fingerprints.
TEST(externally_locked_stress, clusters_across_lock_stripes) {
    unsigned const q = 13, r = 12;
    for (int round = 0; round < 10; ++round) {
        externally_locked f(q, r);
        std::vector<uint64_t> keys;
        for (uint64_t i = 0; i < 240; ++i) {
            uint64_t const slot = 4096 - 160 + qmer::test::mix_key(i + 1000 * round) % 256;
            keys.push_back((slot << (64 - q)) | (qmer::test::mix_key(~i) >> q));
        }
        std::atomic<size_t> inserted{0}, false_negatives{0};
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < 16; ++t) {
            threads.emplace_back([&, t] {
                size_t mine = 0;
                for (size_t i = 0; i < keys.size(); ++i) {
                    uint64_t const key = keys[(i * 7 + t * 31) % keys.size()];
                    auto const res = f.insert(key);
                    ASSERT_NE(res, insert_result::full);
                    mine += res == insert_result::inserted;
                    if (!f.contains(key)) false_negatives.fetch_add(1);
                }
                inserted.fetch_add(mine);
            });
        }
        for (auto& t : threads) t.join();
        EXPECT_EQ(false_negatives.load(), 0u);
        std::vector<uint64_t> fps;
        for (uint64_t key : keys) fps.push_back(key >> (64 - q - r));
        std::sort(fps.begin(), fps.end());
        fps.erase(std::unique(fps.begin(), fps.end()), fps.end());
        EXPECT_EQ(f.size(), fps.size());
        EXPECT_EQ(inserted.load(), fps.size()) << "each fingerprint inserted exactly once";
        for (uint64_t key : keys) ASSERT_TRUE(f.contains(key));
        size_t filled = 0;
        for (size_t s = 0; s < f.slots().slot_count(); ++s) filled += f.slots().get(s) != 0;
        EXPECT_EQ(filled, fps.size());
    }
}

}  // namespace
