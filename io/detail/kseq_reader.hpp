#pragma once
// kseq.h's FASTA/FASTQ parser (htslib) over a field reader of qmer's own: QMER_KSEQ_INIT(type_t,
// read) defines what KSEQ_INIT(type_t, read) defines, from kseq.h's own parts in its order, except
// ks_getuntil2, the reader kseq_read takes every name, line and sequence with. kseq.h's compares a
// byte at a time (~4 instructions a byte: 4% of a default query's instructions on 150 bp FASTQ and
// 9% of a --quick one's, counted with callgrind); this one finds a line's end with memchr. Used by
// io/detail/fastx_source.cpp and by bench/peers' input floor, which must parse as fast as qmer
// does to stay a floor. tests/io/detail/fastx_source_test.cpp holds it to kseq.h's records.
//
// Include this before any C++ standard header (kseq.h's isspace(): see fastx_source.cpp), and use
// the macro inside an anonymous namespace (kseq.h's types get external-linkage names).

#include <htslib/kseq.h>

#include <new>

namespace qmer::io::detail {

// The bytes kseq asks its input for at a time. The chunked reader reads a file's stream in requests
// of this size too: a damaged gzip stream then fails at the same request, after the same bytes, as
// under the serial parser, so both report the damage at the same record.
inline constexpr int kseq_buffer_bytes = 16384;

// kseq.h's ks_getuntil2, with `read` for its __read: reads into str (appended to it when
// `append`) up to the next delimiter, which it consumes: KS_SEP_LINE a line's end ('\n'; a '\r'
// before it is dropped), KS_SEP_SPACE any isspace() byte, KS_SEP_TAB any isspace() byte but ' ',
// any other value that byte. *dret (when given): the delimiter found, 0 at the end of the input.
// Returns str's length, or -1 when the input had ended before anything was read. str always ends
// with a NUL.
template <typename Kstream, typename Read>
int kseq_getuntil(Kstream* ks, int delimiter, kstring_t* str, int* dret, int append, Read read) {
    bool gotany = false;
    if (dret != nullptr) *dret = 0;
    str->l = append ? str->l : 0;
    uint64_t consumed = str->l;  // kseq's seek_pos bookkeeping, kept as kseq.h keeps it
    for (;;) {
        if (ks->begin >= ks->end) {
            if (ks->is_eof) break;
            ks->begin = 0;
            ks->end = read(ks->f, ks->buf, ks->bufsize);
            if (ks->end == 0) {
                ks->is_eof = 1;
                break;
            }
        }
        unsigned char const* const from = ks->buf + ks->begin;
        auto const avail = static_cast<size_t>(ks->end - ks->begin);
        size_t n = avail;  // the bytes before the delimiter: all of them when it is not here
        if (delimiter == KS_SEP_LINE || delimiter > KS_SEP_MAX) {
            int const byte = delimiter == KS_SEP_LINE ? '\n' : delimiter;
            if (void const* hit = memchr(from, byte, avail); hit != nullptr)
                n = static_cast<size_t>(static_cast<unsigned char const*>(hit) - from);
        } else {
            bool const tab = delimiter == KS_SEP_TAB;
            for (n = 0; n < avail; ++n)
                if (isspace(from[n]) && !(tab && from[n] == ' ')) break;
        }
        if (ks_expand(str, n + 1) < 0) throw std::bad_alloc();
        bool const found = n < avail;
        consumed += n + found;
        gotany = true;
        memcpy(str->s + str->l, from, n);
        str->l += n;
        ks->begin += static_cast<int>(n) + 1;  // past the delimiter (past the end when none)
        if (found) {
            if (dret != nullptr) *dret = from[n];
            break;
        }
    }
    if (!gotany && ks_eof(ks)) return -1;
    ks->seek_pos += consumed;
    if (str->s == nullptr) {
        str->m = 1;
        str->s = static_cast<char*>(calloc(1, 1));
        if (str->s == nullptr) throw std::bad_alloc();
    } else if (delimiter == KS_SEP_LINE && str->l > 1 && str->s[str->l - 1] == '\r') {
        --str->l;
    }
    str->s[str->l] = '\0';
    return static_cast<int>(str->l);
}

}  // namespace qmer::io::detail

#define QMER_KSEQ_INIT(type_t, read_fn)                                                            \
    __KS_TYPE(type_t)                                                                              \
    __KS_BASIC(static, type_t, ::qmer::io::detail::kseq_buffer_bytes)                              \
    static int ks_getuntil2(kstream_t* ks, int delimiter, kstring_t* str, int* dret, int append) { \
        return ::qmer::io::detail::kseq_getuntil(ks, delimiter, str, dret, append, read_fn);       \
    }                                                                                              \
    __KS_INLINED(read_fn)                                                                          \
    __KSEQ_TYPE(type_t)                                                                            \
    __KSEQ_BASIC(static, type_t)                                                                   \
    __KSEQ_READ(static)
