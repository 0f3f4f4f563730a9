#include "core/kmer/encoding.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(encoding, bases_get_their_codes_in_either_case) {
    std::string const bases = "ACGTacgt";
    uint8_t const expected[] = {0, 1, 2, 3, 0, 1, 2, 3};
    for (size_t i = 0; i < bases.size(); ++i) EXPECT_EQ(qmer::encode_base(bases[i]), expected[i]);
}

TEST(encoding, every_other_byte_is_invalid) {
    // Exhaustive over all 256 byte values: only ACGT/acgt are bases (N, IUPAC, U, gaps are not).
    int valid = 0;
    for (int c = 0; c < 256; ++c) {
        uint8_t const code = qmer::encode_base(static_cast<char>(c));
        if (code != qmer::invalid_base) {
            ++valid;
            EXPECT_LT(code, 4);
        }
    }
    EXPECT_EQ(valid, 8);
    for (char c : std::string("NnRYKMSWBDHVUu-.*0 \t\r\n>@+")) {
        EXPECT_EQ(qmer::encode_base(c), qmer::invalid_base) << "character '" << c << "'";
    }
}

TEST(encoding, complement_pairs_a_with_t_and_c_with_g) {
    EXPECT_EQ(qmer::complement_code(qmer::encode_base('A')), qmer::encode_base('T'));
    EXPECT_EQ(qmer::complement_code(qmer::encode_base('C')), qmer::encode_base('G'));
    for (uint8_t code = 0; code < 4; ++code) {
        EXPECT_EQ(qmer::complement_code(qmer::complement_code(code)), code);
        EXPECT_EQ(qmer::encode_base(qmer::decode_base(code)), code);
    }
}

}  // namespace
