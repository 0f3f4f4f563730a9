#include "io/detail/hts_source.hpp"

#include <htslib/bgzf.h>
#include <htslib/hts.h>
#include <htslib/sam.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include <sys/stat.h>

#include "core/error.hpp"
#include "io/detail/bgzf_fallback.hpp"

namespace qmer::io::detail {
namespace {

// htslib's 4-bit base codes have one bit per base (A=1, C=2, G=4, T=8), so the complement of any
// IUPAC code is its four bits reversed: this table maps a code to the letter of its complement.
constexpr char complement_letter[16] = {'=', 'T', 'G', 'K', 'C', 'Y', 'S', 'B',
                                        'A', 'W', 'R', 'D', 'M', 'H', 'V', 'N'};

class hts_source final : public record_source {
  public:
    hts_source(htsFile* fp, std::string path, unsigned threads) : fp_(fp), path_(std::move(path)) {
        // BGZF-compressed SAM/BAM: the same end-of-file-marker rule as text input (htslib only
        // warns), checked before threads start because threaded reading cannot see it at the end.
        if (BGZF* bgzf = fp_->is_bgzf ? fp_->fp.bgzf : nullptr;
            bgzf != nullptr && bgzf->is_compressed && !bgzf->is_gzip && bgzf_check_EOF(bgzf) == 0) {
            close();
            throw input_error(path_ +
                              ": truncated BGZF data: the end-of-file marker block is missing");
        }
        // The header is read before the decompression threads start. bam_hdr_read() checks the
        // end-of-file marker, which with threads is a request to htslib's reader thread; when
        // that thread has already stopped on a damaged block, the request is never answered and
        // the read waits forever (htslib 1.16; found by fuzz/sequence_reader_fuzz, see
        // tests/regressions/bam_header_with_threads_hangs_test.cpp). Threads started after the
        // header continue from the block the header read stopped in.
        check_bam_header_sizes();
        header_ = sam_hdr_read(fp_);
        if (header_ == nullptr) {
            close();
            throw input_error(path_ +
                              ": cannot read the SAM/BAM/CRAM header (damaged or truncated)");
        }
        // BGZF-compressed SAM text is read without threads: htslib parses it with a reader of its
        // own (sam_set_threads) whose end of input and error reports differ from the
        // single-threaded reader's (fuzz/sequence_reader_fuzz found two inputs it read otherwise;
        // tests/regressions/bgzf_threads_refuse_concatenated_gzip_test.cpp). Reads are seldom
        // stored so; BAM and CRAM, the usual forms, keep their threads.
        if (fp_->format.format == sam) threads = 0;
        if (threads > 0 && hts_set_threads(fp_, static_cast<int>(threads)) != 0) {
            close();
            throw input_error(path_ + ": cannot start " + std::to_string(threads) +
                              " decompression threads");
        }
        threaded_ = fp_->is_bgzf && fp_->fp.bgzf->mt != nullptr;
        record_ = bam_init1();
        if (record_ == nullptr) {
            close();
            throw std::bad_alloc();
        }
        // The first record is read ahead, for flagged_paired(); a problem it has is thrown by the
        // first read(), where reading without the look-ahead would have met it.
        try {
            ahead_ = next_primary() ? ahead::record : ahead::end;
        } catch (...) {
            ahead_ = ahead::problem;
            ahead_problem_ = std::current_exception();
        }
        flagged_paired_ = ahead_ == ahead::record && (record_->core.flag & BAM_FPAIRED) != 0;
    }
    ~hts_source() override { close(); }
    hts_source(hts_source const&) = delete;
    hts_source& operator=(hts_source const&) = delete;

    bool read(record_batch& batch, uint64_t number) override {
        bool got = false;
        switch (ahead_) {
            case ahead::none:
                got = next_primary();
                break;
            case ahead::record:
                got = true;
                break;
            case ahead::end:
                break;
            case ahead::problem:
                ahead_ = ahead::none;
                std::rethrow_exception(ahead_problem_);
        }
        ahead_ = ahead::none;
        if (!got) {
            if (rule_ == mate_flags::mates && mate1_waiting_) {
                throw input_error(path_ + ": record " + std::to_string(number - 1) + " ('" +
                                  mate1_name_ + "'): a first mate (0x40) ends the file, with no " +
                                  "second mate (0x80) after it");
            }
            return false;
        }
        check_flags(number);
        append(batch, (record_->core.flag & BAM_FREVERSE) != 0);
        return true;
    }

    bool flagged_paired() const noexcept override { return flagged_paired_; }
    void follow_mate_flags(mate_flags rule) override {
        // Mates by their flags need a file flagged paired; any other is held to uniform pairing.
        rule_ = rule == mate_flags::mates && !flagged_paired_ ? mate_flags::uniform : rule;
    }

  private:
    // A BAM header gives its text's length, its reference count and each reference name's length,
    // and htslib 1.16 allocates each as given before it reads what it sized: damaged files of 16
    // and 62 bytes asked for 1 GiB (found by fuzz/sequence_reader_fuzz;
    // tests/regressions/bam_header_claims_gigabytes_test.cpp and
    // bam_reference_name_claims_gigabytes_test.cpp). Every size the first block shows is checked
    // before htslib reads the header, against two bounds: what the file can hold past that field
    // (bam_header_capacity) and a fixed one no real header nears (256 MiB of text or of one name,
    // 2^26 references: each of htslib's arrays then stays under 512 MiB). A size past the first
    // block is left to htslib, bounded by the reference count already checked.
    void check_bam_header_sizes() {
        if (fp_->format.format != bam || !fp_->is_bgzf) return;
        BGZF* const bgzf = fp_->fp.bgzf;
        if (bgzf_peek(bgzf) < 0) return;  // empty or unreadable: htslib's own error follows
        auto const* const at =
            static_cast<unsigned char const*>(bgzf->uncompressed_block) + bgzf->block_offset;
        size_t const shown = static_cast<size_t>(bgzf->block_length - bgzf->block_offset);
        auto const le32 = [&](size_t offset) {
            return static_cast<uint32_t>(at[offset]) | static_cast<uint32_t>(at[offset + 1]) << 8 |
                   static_cast<uint32_t>(at[offset + 2]) << 16 |
                   static_cast<uint32_t>(at[offset + 3]) << 24;
        };
        if (shown < 8 || std::memcmp(at, "BAM\1", 4) != 0) return;
        uint64_t const capacity = bam_header_capacity(bgzf);
        // The bytes the file can hold past `offset` (the header starts the uncompressed stream).
        auto const room = [&](uint64_t offset) {
            return capacity > offset ? capacity - offset : 0;
        };
        constexpr uint64_t most_text = uint64_t{256} << 20;

        uint64_t const text = le32(4);
        if (text > most_text || text > room(12)) {
            refuse("it declares " + std::to_string(text) + " bytes of header text (" +
                   limit_words(most_text, "256 MiB", room(12), "bytes") + ")");
        }
        if (shown < 12 + text) return;
        uint64_t const references = le32(8 + text);
        // Each reference takes at least 9 bytes: its name's length, one name byte, its length.
        uint64_t const most_references = uint64_t{1} << 26;
        uint64_t const references_room = room(12 + text) / 9;
        if (references > most_references || references > references_room) {
            refuse("it declares " + std::to_string(references) + " reference sequences (" +
                   limit_words(most_references, "2^26", references_room, "references") + ")");
        }
        uint64_t offset = 12 + text;
        for (uint64_t i = 0; i < references && offset + 4 <= shown; ++i) {
            uint32_t const raw = le32(offset);
            // A negative or zero length is htslib's own error ("invalid BAM binary header").
            if (static_cast<int32_t>(raw) <= 0) return;
            uint64_t const name = raw;
            if (name > most_text || name + 4 > room(offset + 4)) {
                refuse("it declares " + std::to_string(name) + " bytes for the name of reference " +
                       std::to_string(i + 1) + " (" +
                       limit_words(most_text, "256 MiB",
                                   room(offset + 4) >= 4 ? room(offset + 4) - 4 : 0, "bytes") +
                       ")");
            }
            offset += 4 + name + 4;
        }
    }

    // An upper bound on the uncompressed bytes the file holds, or UINT64_MAX where its size is not
    // known (a pipe). A BGZF block is at least 28 bytes (18 of header, 2 of the smallest deflate
    // stream, 8 of trailer) and holds at most 64 KiB; plain gzip inflates at most 1032:1, within
    // the same bound.
    uint64_t bam_header_capacity(BGZF const* bgzf) const {
        struct stat st {};
        if (path_ == "-" || ::stat(path_.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            return UINT64_MAX;
        auto const size = static_cast<uint64_t>(st.st_size);
        return bgzf->is_compressed ? (size / 28 + 1) * 65536 : size;
    }

    // Why a size was refused: past what the file can hold, or past the fixed bound.
    static std::string limit_words(uint64_t fixed, char const* fixed_words, uint64_t room,
                                   char const* unit) {
        if (room < fixed)
            return "the file has room for at most " + std::to_string(room) + " " + unit;
        return std::string("more than ") + fixed_words;
    }

    [[noreturn]] void refuse(std::string const& what) {
        close();
        throw input_error(path_ + ": damaged BAM header: " + what);
    }

    // Reads the next record that is not secondary or supplementary (those repeat, in part, a read
    // already given) into record_: false at the end of the file.
    bool next_primary() {
        for (;;) {
            int const status = sam_read1(fp_, header_, record_);
            if (status >= -1 && threaded_) clear_threads_fallback_mark(fp_->fp.bgzf, threaded_);
            if (status == -1) {
                // With decompression threads, a damaged block can end the stream as a clean EOF
                // while leaving its mark in the BGZF error state (found by fuzz/, see
                // tests/regressions/): check it, so damage is never an empty or short input.
                if (BGZF* bgzf = fp_->is_bgzf ? fp_->fp.bgzf : nullptr;
                    bgzf != nullptr && bgzf->errcode != 0)
                    throw input_error(path_ + ": truncated or corrupt BGZF data (htslib error " +
                                      std::to_string(bgzf->errcode) + ")");
                return false;
            }
            ++file_records_;
            if (status < -1) {
                throw input_error(path_ + ": record " + std::to_string(file_records_) +
                                  " (counting every record of the file): damaged or truncated " +
                                  "SAM/BAM/CRAM record (htslib status " + std::to_string(status) +
                                  ")");
            }
            if ((record_->core.flag & (BAM_FSECONDARY | BAM_FSUPPLEMENTARY)) == 0) return true;
        }
    }

    // Holds record_, record `number` of the reads, to rule_.
    void check_flags(uint64_t number) {
        if (rule_ == mate_flags::ignored) return;
        uint16_t const flag = record_->core.flag;
        bool const paired = (flag & BAM_FPAIRED) != 0;
        if (paired != flagged_paired_) {
            refuse_record(number, std::string(paired ? "flagged" : "not flagged") +
                                      " paired (0x1), unlike the file's first record: the file " +
                                      "mixes single reads and pairs");
        }
        if (rule_ != mate_flags::mates) return;
        bool const first = (flag & BAM_FREAD1) != 0;
        bool const second = (flag & BAM_FREAD2) != 0;
        if (first && second)
            refuse_record(number, "flagged both first mate (0x40) and second mate (0x80)");
        if (!first && !second) {
            refuse_record(number,
                          "flagged paired (0x1) but neither first mate (0x40) nor second mate "
                          "(0x80)");
        }
        if (first && mate1_waiting_) {
            refuse_record(number, "a first mate (0x40) where the second mate (0x80) of record " +
                                      std::to_string(number - 1) + " ('" + mate1_name_ +
                                      "') should follow" + adjacent_hint);
        }
        if (second && !mate1_waiting_) {
            refuse_record(number,
                          std::string("a second mate (0x80) with no first mate (0x40) before it") +
                              adjacent_hint);
        }
        mate1_waiting_ = first;
        if (first) mate1_name_.assign(bam_get_qname(record_));
    }

    static constexpr char const* adjacent_hint =
        ": the mates of a pair must be adjacent, first then second (samtools collate or "
        "samtools sort -n puts them so)";

    [[noreturn]] void refuse_record(uint64_t number, std::string const& what) const {
        throw input_error(path_ + ": record " + std::to_string(number) + " ('" +
                          bam_get_qname(record_) + "'): " + what);
    }

    void append(record_batch& batch, bool reverse) {
        std::string_view const name(bam_get_qname(record_));
        size_t const length = static_cast<size_t>(record_->core.l_qseq);
        uint8_t const* bases = bam_get_seq(record_);
        uint8_t const* quals = bam_get_qual(record_);
        // 0xff in the first quality byte is BAM's "no qualities" ('*' in SAM).
        bool const has_quality = length > 0 && quals[0] != 0xff;
        char* out = batch.append_uninitialized(name.size(), 0, length, has_quality ? length : 0);
        // An empty record (no name, no bases: SAM allows the line) has no storage at all, and
        // memcpy's pointers must not be null even for 0 bytes (fuzz/findings/sam_empty_record.sam).
        if (!name.empty()) std::memcpy(out, name.data(), name.size());
        char* seq = out + name.size();
        char* qual = seq + length;
        if (!reverse) {
            for (size_t i = 0; i < length; ++i) seq[i] = seq_nt16_str[bam_seqi(bases, i)];
            if (has_quality) {
                for (size_t i = 0; i < length; ++i) qual[i] = static_cast<char>(quals[i] + 33);
            }
        } else {
            for (size_t i = 0; i < length; ++i) {
                seq[length - 1 - i] = complement_letter[bam_seqi(bases, i)];
            }
            if (has_quality) {
                for (size_t i = 0; i < length; ++i) {
                    qual[length - 1 - i] = static_cast<char>(quals[i] + 33);
                }
            }
        }
    }

    void close() noexcept {
        if (record_ != nullptr) bam_destroy1(record_);
        if (header_ != nullptr) sam_hdr_destroy(header_);
        if (fp_ != nullptr) hts_close(fp_);
        record_ = nullptr;
        header_ = nullptr;
        fp_ = nullptr;
    }

    htsFile* fp_;
    std::string path_;
    sam_hdr_t* header_ = nullptr;
    bam1_t* record_ = nullptr;
    uint64_t file_records_ = 0;
    // The record read ahead at the opening, until the first read() takes it.
    enum class ahead { none, record, end, problem } ahead_ = ahead::none;
    std::exception_ptr ahead_problem_;
    bool flagged_paired_ = false;
    mate_flags rule_ = mate_flags::ignored;
    bool mate1_waiting_ = false;  // mates: the last record was a first mate, named mate1_name_
    std::string mate1_name_;
    bool threaded_ = false;  // BGZF threads ran at the last look (htslib may stop them:
                             // bgzf_fallback.hpp)
};

}  // namespace

std::unique_ptr<record_source> make_hts_source(htsFile* fp, std::string path, unsigned threads) {
    return std::make_unique<hts_source>(fp, std::move(path), threads);
}

}  // namespace qmer::io::detail
