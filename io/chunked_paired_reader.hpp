#pragma once
// Paired-end input (two mate files, or one interleaved file) through the chunked reader's stages
// (io/chunked_reader.hpp): each file's text cut into chunks by the input stage and parsed by
// several threads, the mates paired by the settling stage, in input order. The pairs, their
// numbers and every error are paired_reader's (io/paired_reader.hpp): the same mates, the same
// checks (mate names, one file ending before the other, an odd interleaved file, and each file's
// own), and of several problems the one paired_reader meets first. paired_reader reads mate 1 of
// a pair, then mate 2, then compares their names, pair after pair; the settling stage replays
// exactly that over the records the chunks gave, so a problem of mate 2's file further on waits
// until everything before it in that order is known to be fine.
//
// Two files are cut independently, so a chunk of one may hold more records than the other's: the
// settling stage pairs what it can and keeps the rest (a copy of those records) for the next
// chunk. To keep that small, the input stage holds back a file whose kept records exceed a chunk's
// bytes (the file with the longer reads per byte, say) while the other catches up. Interleaved
// input: the settling stage splits each chunk's records into mates 1 and 2 (a copy, on that
// stage's thread, which runs beside the input stage's). Matching files of equal read lengths are
// cut at the same records and paired without a copy. A SAM/BAM/CRAM file flagged paired is read
// as interleaved input whose records' flags are checked by its reader (mate_flags::mates).

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "io/chunked_reader.hpp"
#include "io/paired_reader.hpp"
#include "io/sequence_record.hpp"

namespace qmer::io {

// The pipeline's unit of paired input: a chunk of each file (one for interleaved input) and what
// parsing them gave. Reused, keeping its memory.
class paired_chunk {
  private:
    friend class chunked_paired_reader;

    std::array<text_chunk, 2> text_;
    std::array<record_batch, 2> parsed_;
    std::array<bool, 2> cut_{};      // this file got a chunk
    std::array<bool, 2> used_up_{};  // this file had nothing more to cut
};

class chunked_paired_reader {
  public:
    // Two files in lockstep. options and sizes as for chunked_reader (each file's chunks).
    chunked_paired_reader(std::string path1, std::string path2, reader_options options = {},
                          chunk_sizes sizes = {});
    // One file: interleaved, or SAM/BAM/CRAM flagged paired (paired by their flags, as
    // paired_reader reads one file).
    explicit chunked_paired_reader(std::string interleaved_path, reader_options options = {},
                                   chunk_sizes sizes = {});
    // The same over a file already opened (standard input can be opened only once), as long as
    // nothing has been cut from it: to learn first whether it is flagged_paired().
    explicit chunked_paired_reader(chunked_reader&& one_file);
    ~chunked_paired_reader();
    chunked_paired_reader(chunked_paired_reader const&) = delete;
    chunked_paired_reader& operator=(chunked_paired_reader const&) = delete;

    // The input stage (serial, in order): the next chunks; false when both inputs are used up.
    bool cut(paired_chunk& chunk);
    // The parsing stage (any thread, concurrently): parses the chunk's text.
    static void parse(paired_chunk& chunk);
    // The settling stage (serial, in order): replaces pairs with the next pairs (possibly none),
    // numbered (pairs.first_pair_number()). Throws input_error as paired_reader does.
    void settle(paired_chunk& chunk, paired_batch& pairs);

    // One file (interleaved or flagged paired) rather than two.
    bool interleaved() const noexcept { return readers_.size() == 1; }
    // One SAM/BAM/CRAM file whose mates are told by their flags (0x40, 0x80).
    bool mates_by_flags() const noexcept { return interleaved() && readers_[0]->flagged_paired(); }
    uint64_t pairs_read() const noexcept { return pairs_; }
    // Bytes of records parsed and kept back, waiting for their mates (after the last settle()).
    size_t waiting_bytes() const noexcept {
        return sides_[0].kept.stored_bytes() + sides_[1].kept.stored_bytes();
    }

  private:
    // The settling stage's view of one file: records parsed and not yet paired, and what comes
    // after them.
    struct side {
        record_batch kept;              // records of earlier chunks not yet paired
        record_batch* fresh = nullptr;  // this chunk's records, after kept
        enum class then { more, end, fails } after = then::more;
        std::exception_ptr problem;  // fails: what reading on after the records throws

        size_t size() const noexcept { return kept.size() + (fresh ? fresh->size() : 0); }
        sequence_record operator[](size_t i) const noexcept {
            return i < kept.size() ? kept[i] : (*fresh)[i - kept.size()];
        }
    };
    // What reading record `at` of a side gives, as paired_reader's read_record would.
    enum class read { record, end, wait };

    void take_chunk(paired_chunk& chunk, size_t s);
    read peek(size_t s, size_t at) const;
    size_t pair_files();
    size_t pair_interleaved();
    void keep_rest(size_t s, size_t from, record_batch* fresh_batch);
    void check_names(sequence_record const& a, sequence_record const& b) const;

    std::vector<std::unique_ptr<chunked_reader>> readers_;
    std::array<side, 2> sides_;
    std::array<bool, 2> used_up_{};  // the input stage's: nothing more to cut
    // The settling stage tells the input stage how many bytes of records it keeps per file.
    std::array<std::atomic<size_t>, 2> kept_bytes_{};
    size_t hold_above_ = 0;
    uint64_t pairs_ = 0;
    record_batch spare_;
};

}  // namespace qmer::io
