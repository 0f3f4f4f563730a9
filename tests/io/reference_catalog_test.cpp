// Tests of io/reference_catalog.hpp: a many-reference index's catalog section reads back as the
// catalog written (names, groups, sources, counts, class table, id width), and read() refuses
// words that do not read as a catalog: a wrong tag, no references, a cut, an empty class, a
// member past the references, more classes than the ids name, words past its end.

#include "io/reference_catalog.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/qf/stored/classes.hpp"

namespace {

using qmer::io::reference_catalog;
using qmer::io::reference_info;

reference_catalog sample() {
    reference_catalog c;
    c.references = {{"ecoli_k12", "ecoli", "refs/k12.fa.gz", 4600000, 120000},
                    {"ecoli_o157", "ecoli", "refs/o157.fa", 5500000, 800000},
                    {"salmonella", "", "s.fa", 4800000, 4000000},  // no group
                    {std::string(90000, 'n'), std::string(300, 'g'), std::string(5000, 's'), 1,
                     0},                 // long names
                    {"", "", "", 0, 0},  // every text empty
                    {std::string("a\0b", 3), "x,y z", "/p\tq", ~uint64_t{0}, uint64_t{1} << 40}};
    c.classes = qmer::qf::class_table({0, 1, 3, 4, 10, 11}, {0, 0, 1, 2, 0, 1, 2, 3, 4, 5, 5}, 6);
    c.value_bits = qmer::qf::class_id_bits(c.classes.size());
    return c;
}

void expect_same(reference_catalog const& a, reference_catalog const& b) {
    ASSERT_EQ(a.references.size(), b.references.size());
    for (size_t i = 0; i < a.references.size(); ++i) {
        reference_info const &x = a.references[i], &y = b.references[i];
        EXPECT_EQ(x.name, y.name) << i;
        EXPECT_EQ(x.group, y.group) << i;
        EXPECT_EQ(x.source, y.source) << i;
        EXPECT_EQ(x.kmers, y.kmers) << i;
        EXPECT_EQ(x.unique_kmers, y.unique_kmers) << i;
    }
    EXPECT_EQ(a.classes.offsets(), b.classes.offsets());
    EXPECT_EQ(a.classes.all_members(), b.classes.all_members());
    EXPECT_EQ(a.value_bits, b.value_bits);
}

// The section's byte string as reference_catalog.hpp describes it, written by hand, so that the
// tests can write what the catalog's own writer never would.
class section_bytes {
  public:
    section_bytes& u32(uint32_t v) { return raw(&v, sizeof v); }
    section_bytes& u64(uint64_t v) { return raw(&v, sizeof v); }
    section_bytes& text(std::string const& s) {
        u32(static_cast<uint32_t>(s.size()));
        return raw(s.data(), s.size());
    }
    section_bytes& reference(std::string const& name, std::string const& group = "") {
        return text(name).text(group).text(name + ".fa").u64(10).u64(5);
    }
    section_bytes& set(std::vector<uint32_t> const& members) {
        u32(static_cast<uint32_t>(members.size()));
        for (uint32_t const m : members) u32(m);
        return *this;
    }
    std::vector<uint64_t> words() const {
        std::vector<uint64_t> out((bytes_.size() + 7) / 8, 0);
        if (!bytes_.empty()) std::memcpy(out.data(), bytes_.data(), bytes_.size());
        return out;
    }

  private:
    section_bytes& raw(void const* p, size_t n) {
        auto const* c = static_cast<char const*>(p);
        bytes_.insert(bytes_.end(), c, c + n);
        return *this;
    }
    std::vector<char> bytes_;
};

std::vector<uint64_t> params(uint64_t references, uint64_t classes, uint64_t value_bits) {
    return {qmer::io::catalog_tag, references, classes, value_bits, 0};
}

// Three references, classes {0}, {1, 2}, {0, 1, 2}: a valid section to change one thing of.
section_bytes three_references() {
    section_bytes b;
    b.reference("a", "g").reference("b", "g").reference("c");
    return b;
}

TEST(reference_catalog, reads_back_what_it_wrote) {
    reference_catalog const c = sample();
    auto const p = c.params();
    ASSERT_EQ(p.size(), 5u);
    EXPECT_EQ(p[0], qmer::io::catalog_tag);
    EXPECT_EQ(p[1], 6u);
    EXPECT_EQ(p[2], 5u);
    EXPECT_EQ(p[3], 3u);
    EXPECT_EQ(p[4], 0u);  // no escaped fingerprint
    EXPECT_TRUE(reference_catalog::is_catalog(p));
    auto const words = c.words();
    reference_catalog const back = reference_catalog::read(p, words);
    expect_same(back, c);
    // Its words again, word for word.
    EXPECT_EQ(back.words(), words);
}

TEST(reference_catalog, words_follow_the_documented_layout) {
    // Names, groups, sources with u32 lengths, two u64 counts, then each class's size and members.
    reference_catalog c;
    c.references = {{"a", "g", "a.fa", 10, 5}, {"b", "g", "b.fa", 10, 5}, {"c", "", "c.fa", 10, 5}};
    c.classes = qmer::qf::class_table({0, 1, 3, 6}, {0, 1, 2, 0, 1, 2}, 3);
    c.value_bits = 2;
    auto const expected = three_references().set({0}).set({1, 2}).set({0, 1, 2}).words();
    EXPECT_EQ(c.words(), expected);
    expect_same(reference_catalog::read(params(3, 3, 2), expected), c);
}

TEST(reference_catalog, one_reference_and_one_class_reads_back) {
    reference_catalog c;
    c.references = {{"only", "", "only.fa", 3, 3}};
    c.classes = qmer::qf::class_table({0, 1}, {0}, 1);
    c.value_bits = 1;
    expect_same(reference_catalog::read(c.params(), c.words()), c);
}

TEST(reference_catalog, members_of_group_lists_the_group_in_reference_order) {
    reference_catalog const c = sample();
    EXPECT_EQ(c.members_of_group("ecoli"), (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(c.members_of_group(std::string(300, 'g')), (std::vector<uint32_t>{3}));
    EXPECT_TRUE(c.members_of_group("").empty());  // "no group" is not a group
    EXPECT_TRUE(c.members_of_group("salmonella").empty());
}

TEST(reference_catalog, refuses_parameters_that_are_not_a_catalogs) {
    reference_catalog const c = sample();
    auto const words = c.words();
    auto p = c.params();
    p[0] ^= 1;  // wrong tag
    EXPECT_FALSE(reference_catalog::is_catalog(p));
    EXPECT_THROW(reference_catalog::read(p, words), std::invalid_argument);
    p = c.params();
    p.push_back(0);  // six parameters
    EXPECT_THROW(reference_catalog::read(p, words), std::invalid_argument);
    p = c.params();
    p.pop_back();
    EXPECT_THROW(reference_catalog::read(p, words), std::invalid_argument);
    p = c.params();
    p[1] = 0;  // no references
    EXPECT_THROW(reference_catalog::read(p, words), std::invalid_argument);
    p = c.params();
    p[2] = 0;  // no classes
    EXPECT_THROW(reference_catalog::read(p, words), std::invalid_argument);
    for (uint64_t const bits : {uint64_t{0}, uint64_t{33}, ~uint64_t{0}}) {
        p = c.params();
        p[3] = bits;  // an id width that is none
        EXPECT_THROW(reference_catalog::read(p, words), std::invalid_argument) << bits;
    }
    // Reference and class counts far beyond what the words hold.
    p = c.params();
    p[1] = uint64_t{1} << 40;
    EXPECT_THROW(reference_catalog::read(p, words), std::invalid_argument);
    p = c.params();
    p[2] = uint64_t{1} << 40;
    p[3] = 32;
    EXPECT_THROW(reference_catalog::read(p, words), std::invalid_argument);
}

TEST(reference_catalog, refuses_words_cut_short) {
    reference_catalog const c = sample();
    auto const words = c.words();
    ASSERT_GT(words.size(), 10000u);  // the long names
    // Every cut at a word (the padding is less than a word, so each loses a byte of the content),
    // the short ones one by one and the long ones in steps.
    for (size_t n = 0; n < words.size(); n += n < 300 || words.size() - n < 300 ? 1 : 97) {
        EXPECT_THROW(reference_catalog::read(c.params(), std::span(words).first(n)),
                     std::invalid_argument)
            << n << " of " << words.size();
    }
    // More references than the words hold.
    auto p = c.params();
    p[1] += 1;
    EXPECT_THROW(reference_catalog::read(p, words), std::invalid_argument);
    // More classes than the words hold.
    p = c.params();
    p[2] += 1;
    EXPECT_THROW(reference_catalog::read(p, words), std::invalid_argument);
}

TEST(reference_catalog, refuses_a_name_longer_than_the_words) {
    section_bytes b;
    b.u32(1000).u32(0);  // a name of 1000 bytes, and nothing after
    auto const words = b.set({0}).words();
    EXPECT_THROW(reference_catalog::read(params(1, 1, 1), words), std::invalid_argument);
}

TEST(reference_catalog, refuses_an_empty_class) {
    auto const good = three_references().set({0}).set({1, 2}).set({0, 1, 2}).words();
    EXPECT_NO_THROW(reference_catalog::read(params(3, 3, 2), good));
    auto const empty_last = three_references().set({0}).set({1, 2}).set({}).words();
    EXPECT_THROW(reference_catalog::read(params(3, 3, 2), empty_last), std::invalid_argument);
    auto const empty_first = three_references().set({}).set({1, 2}).set({0, 1, 2}).words();
    EXPECT_THROW(reference_catalog::read(params(3, 3, 2), empty_first), std::invalid_argument);
}

TEST(reference_catalog, refuses_a_class_larger_than_the_references_or_its_words) {
    // Four members of three references; then a size that runs past the words.
    auto const too_many = three_references().set({0, 1, 2, 2}).set({0}).words();
    EXPECT_THROW(reference_catalog::read(params(3, 2, 1), too_many), std::invalid_argument);
    auto const cut = three_references().set({0}).u32(3).u32(1).words();
    EXPECT_THROW(reference_catalog::read(params(3, 2, 1), cut), std::invalid_argument);
}

TEST(reference_catalog, refuses_a_member_past_the_references) {
    auto const past = three_references().set({0}).set({1, 3}).words();
    EXPECT_THROW(reference_catalog::read(params(3, 2, 1), past), std::invalid_argument);
    auto const far = three_references().set({UINT32_MAX}).words();
    EXPECT_THROW(reference_catalog::read(params(3, 1, 1), far), std::invalid_argument);
    // Members out of order or repeated are no set either.
    auto const unsorted = three_references().set({2, 1}).words();
    EXPECT_THROW(reference_catalog::read(params(3, 1, 1), unsorted), std::invalid_argument);
    auto const repeated = three_references().set({1, 1}).words();
    EXPECT_THROW(reference_catalog::read(params(3, 1, 1), repeated), std::invalid_argument);
    auto const last = three_references().set({0}).set({1, 2}).words();
    EXPECT_NO_THROW(reference_catalog::read(params(3, 2, 1), last));
}

TEST(reference_catalog, refuses_more_classes_than_its_ids_name) {
    auto const four = three_references().set({0}).set({1}).set({2}).set({0, 2}).words();
    EXPECT_NO_THROW(reference_catalog::read(params(3, 4, 2), four));  // 2^2 = 4: ids 0..3
    EXPECT_THROW(reference_catalog::read(params(3, 4, 1), four), std::invalid_argument);
    auto const three = three_references().set({0}).set({1}).set({2}).words();
    EXPECT_THROW(reference_catalog::read(params(3, 3, 1), three), std::invalid_argument);
    auto const two = three_references().set({0}).set({1}).words();
    EXPECT_NO_THROW(reference_catalog::read(params(3, 2, 1), two));
}

TEST(reference_catalog, refuses_words_past_its_end) {
    reference_catalog const c = sample();
    auto words = c.words();
    words.push_back(0);  // a zero word
    EXPECT_THROW(reference_catalog::read(c.params(), words), std::invalid_argument);
    words.back() = 0x1234;
    EXPECT_THROW(reference_catalog::read(c.params(), words), std::invalid_argument);
    // A class the parameters do not count.
    auto const extra = three_references().set({0}).set({1, 2}).set({0, 1, 2}).set({1}).words();
    EXPECT_THROW(reference_catalog::read(params(3, 3, 2), extra), std::invalid_argument);
}

TEST(reference_catalog, more_classes_than_its_ids_name_need_an_overflow) {
    auto const four = three_references().set({0}).set({1, 2}).set({0, 1, 2}).set({1}).words();
    auto p = params(3, 4, 1);
    p[4] = 7;  // fingerprints escaped to the overflow: ids 1 .. 3 are not in their slots
    EXPECT_NO_THROW(reference_catalog::read(p, four));
    reference_catalog const c = reference_catalog::read(p, four);
    EXPECT_TRUE(c.has_overflow());
    EXPECT_EQ(c.escape(), 1u);
}

TEST(class_overflow, finds_each_escaped_fingerprint_and_nothing_else) {
    // fp << 10 | id, in fingerprint order.
    std::vector<uint64_t> const words{(uint64_t{3} << 10) | 700, (uint64_t{9} << 10) | 1,
                                      (uint64_t{1000} << 10) | 1023};
    qmer::io::class_overflow const o(words, 10);
    EXPECT_EQ(o.find(3), 700u);
    EXPECT_EQ(o.find(9), 1u);
    EXPECT_EQ(o.find(1000), 1023u);
    for (uint64_t const absent : {0, 2, 4, 10, 999, 1001})
        EXPECT_EQ(o.find(absent), UINT64_MAX) << absent;
    EXPECT_EQ(qmer::io::class_overflow({}, 10).find(3), UINT64_MAX);
    std::vector<uint64_t> const unsorted{(uint64_t{9} << 10) | 1, (uint64_t{3} << 10) | 1};
    EXPECT_THROW(qmer::io::class_overflow(unsorted, 10), std::invalid_argument);
    std::vector<uint64_t> const repeated{(uint64_t{3} << 10) | 1, (uint64_t{3} << 10) | 2};
    EXPECT_THROW(qmer::io::class_overflow(repeated, 10), std::invalid_argument);
    EXPECT_THROW(qmer::io::class_overflow(words, 0), std::invalid_argument);
}

TEST(class_id_bits_for, escapes_only_where_that_saves_bits) {
    // One class: 1 bit, nothing to escape.
    EXPECT_EQ(qmer::io::class_id_bits_for(std::vector<uint64_t>{100}, 10), 1u);
    // 1,024 classes of equal counts: escaping any share costs 64 bits each, more than the bits
    // saved, so every id stays in its slot (10 bits).
    EXPECT_EQ(qmer::io::class_id_bits_for(std::vector<uint64_t>(1024, 1000), 10), 10u);
    // A skewed table: 3 classes hold almost everything, 1,021 a few fingerprints each: 2 bits
    // (ids 0..2 in the slots, the rest escaped).
    std::vector<uint64_t> skewed(1024, 1);
    skewed[0] = skewed[1] = skewed[2] = 1000000;
    EXPECT_EQ(qmer::io::class_id_bits_for(skewed, 10), 2u);
}

}  // namespace
