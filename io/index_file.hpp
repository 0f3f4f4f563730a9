#pragma once
// The index file (ARCHITECTURE.md, "Index file"): one file holding
//   magic "QMERIDX\0" | format version (u32) | byte-order mark (u32) | header length (u64) |
//   header (k, hash seed, filter kind, fpr, expected, element count, parameters, the command and
//   input names that built it) | sections (each: parameter words, word count, the raw 64-bit words
//   of one filter array, 64-byte aligned in the file) | a checksum of everything before it
//   (index_checksum below).
// Written through io::output_file (a file without a name until complete: a failed, interrupted or
// killed build never leaves a truncated index under the final name). Loading memory-maps the file,
// checks magic, version, byte order, size and checksum, and throws index_error saying exactly what
// is wrong and what to do. The filters never see this format: they hand out geometry and raw words,
// and take them back.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/kmer/sequence_hashing.hpp"

namespace qmer::io {

// 2: the expandable filter's arrays carry its level-0 slot count and each level's (slot counts
// need not be powers of two). The container is unchanged and version 1 files load as before; a
// qmer that reads only version 1 refuses version 2 by name instead of calling it damaged.
// 3: the expandable filter's levels are stored in the rank-and-select query layout
// (core/qf/stored/block_format.hpp), which queries read in place; versions 1 and 2 load as before.
// 4: the header ends with the hash scheme (core/kmer/sequence_hashing.hpp): its number, minimizer
// length, window bits and overloaded-window bitmap. Versions 1 to 3 are the plain scheme.
// 5: the external-locks filter's slots keep their status bits in the order of every other quotient
// filter (core/qf/three_bit_layout.hpp); its older files are converted as they load
// (app/filters/persistence.hpp). Nothing else changed.
// 6: hash scheme 2, minimizer_local_levels (core/kmer/sequence_hashing.hpp): new minimizer-local
// indexes carry more window bits for the expandable filter's levels above the first
// (core/qf/stored/level_windows.hpp). The container is unchanged; older files load and answer as
// the qmer that wrote them did.
// 7: the checksum is summed in pieces (index_checksum below), so a build that rewrites its header
// after its sections need not read the file back. Nothing else changed; older files are checked
// by their own rule.
// 8: the checksum's first piece is the file's head (index_checksum_head below), so a build that
// rewrites its header and section parameters after its sections sums them again from memory,
// without reading any of the file back. Nothing else changed; older files are checked by their
// own rule.
// 9: the default filter may end with a minimizer gate section (core/qf/stored/minimizer_gate.hpp),
// which a reader that does not know it would take for a level. Nothing else changed; older files
// load as before.
// 10: a many-reference index (`qmer index -r NAME=FILE ...`): its level's slots carry a class id
// beside each remainder (a 7th level parameter, the id's bits) and the index ends with the
// reference catalog (io/reference_catalog.hpp). Plain indexes are unchanged; older files load as
// before.
inline constexpr uint32_t index_format_version = 10;

// The seal of an index file: its last 8 bytes are a checksum of every byte before them. Formats 1
// to 6: the XXH3-64 of those bytes. From format 7: the XXH3-64 of the XXH3-64 digests (8-byte
// little-endian words, in order) of consecutive pieces of those bytes. Format 7: pieces of
// checksum_piece_bytes, the last shorter. From format 8: the head first (index_checksum_head),
// then pieces of checksum_piece_bytes, the last shorter. A writer then sums again only the
// pieces whose bytes it rewrote, where a single XXH3 stream over the file must be read back
// whole (at host size, gigabytes that direct I/O left out of the page cache); and the bytes a
// build rewrites (the header's final counts, the sections' parameters) all lie in the head, which
// it holds in memory.
inline constexpr uint32_t piecewise_checksum_since = 7;
inline constexpr uint32_t checksum_head_since = 8;
inline constexpr uint64_t checksum_piece_bytes = uint64_t{64} << 20;

// The head of `size` bytes of an index (format 8 on): every byte before the words of the first
// section that has words (the prefix, the header and the parameters of the sections up to there),
// or before the end marker where no section has words. Bytes laid out otherwise (damaged, cut
// short) end the head where the walk meets a word that is not a section marker, or at `size`
// where a field runs past it: any bytes have one head, so the checksum still names the damage.
uint64_t index_checksum_head(void const* bytes, size_t size);

// The checksum of `size` bytes under format_version's rule, given in one piece or, through the
// stream, in order in any number of pieces.
uint64_t index_checksum(uint32_t format_version, void const* bytes, size_t size);
class index_checksum_stream {
  public:
    // head_bytes (format 8 on): the length of the head, index_checksum_head of the bytes to come.
    // Without it the head lasts until end_head(): a writer, which knows where the head ends only
    // when it gets there.
    explicit index_checksum_stream(uint32_t format_version,
                                   std::optional<uint64_t> head_bytes = std::nullopt);
    ~index_checksum_stream();
    index_checksum_stream(index_checksum_stream const&) = delete;
    index_checksum_stream& operator=(index_checksum_stream const&) = delete;
    void update(void const* bytes, size_t size);
    // The head ends here: what follows is summed in pieces of checksum_piece_bytes (format 8 on,
    // without head_bytes; once).
    void end_head();
    // Of everything given so far. Piecewise only: with the digests of the pieces in `replaced`
    // (piece number, the XXH3-64 of its bytes now; from format 8 the head is piece 0) in place of
    // those summed as they were given.
    uint64_t digest(std::span<std::pair<uint64_t, uint64_t> const> replaced = {}) const;

  private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

struct index_header {
    uint32_t format_version = index_format_version;
    unsigned k = 31;
    uint64_t hash_seed = 0;
    std::string filter;                   // the --filter name
    double fpr = 0;                       // configured false-positive bound per k-mer
    uint64_t expected = 0;                // --expected as given (0 = unknown)
    uint64_t elements = 0;                // distinct fingerprints stored
    uint64_t kmers_scanned = 0;           // k-mer positions read from the references
    std::vector<uint64_t> filter_params;  // filter-specific (e.g. levels, growth policy)
    std::string qmer_version;
    std::string command;              // the command line that built (or last appended to) it
    std::vector<std::string> inputs;  // every reference file indexed, in order
    hash_scheme_params hash;          // how k-mers become hashes (plain before format 4)
    // The read-type preset the index was built for (`qmer index --preset`) and the verdict rule it
    // records for queries: the default rule and this minimum containment (< 0: none). Empty for
    // the default preset, whose header then ends at the hash scheme: an index built without
    // --preset is byte for byte the one a qmer without presets writes. When present they follow
    // the hash scheme, within the header's stated length, in the same format version: a qmer
    // without presets reads the index and applies its own default rule to it.
    std::string preset;
    double preset_min_containment = -1;
};

// One filter array: a few parameter words (geometry) and the raw words.
struct index_section_view {
    std::vector<uint64_t> params;
    std::span<uint64_t const> words;
};

// Writes an index: header first, then sections, then commit() seals it with the checksum and
// renames it into place. Destroying it without commit() removes the temporary file.
//
// A build that writes a section while it makes it knows some header counts only at the end (the
// default build streams its level's blocks into the file as they are made: no copy of the level in
// memory, no second pass over it). It writes the header with those counts left at any value
// (header_counts::rewritten_later), then rewrite() puts the final header and section parameters
// over them before commit(). Those in the checksum's head (index_checksum_head: the header, and
// the parameters of the sections up to the first one with words, as in the default build) are
// summed again from the writer's copy of the head; any other checksum piece they change is read
// back and summed again. Only fixed-width values may change, and only in a regular file
// (can_rewrite(path)): not stdout or a device.
enum class header_counts { final, rewritten_later };

class index_writer {
  public:
    index_writer(std::string path, index_header const& header,
                 header_counts counts = header_counts::final);
    ~index_writer();
    index_writer(index_writer const&) = delete;
    index_writer& operator=(index_writer const&) = delete;

    // Whether an index written to `path` can have its header rewritten.
    static bool can_rewrite(std::string const& path);

    void add_section(std::span<uint64_t const> params, std::span<uint64_t const> words);
    // A section whose word_count words are produced while it is written: fill(put) must call
    // put(chunk) with consecutive chunks adding up to exactly word_count words (checked), so a
    // large array is never held twice in memory.
    using word_sink = std::function<void(std::span<uint64_t const>)>;
    void add_section(std::span<uint64_t const> params, uint64_t word_count,
                     std::function<void(word_sink const&)> const& fill);
    // The same, pushed: begin_section, put() the words in order, end_section (counts checked).
    void begin_section(std::span<uint64_t const> params, uint64_t word_count);
    void put(std::span<uint64_t const> words);
    void end_section();
    // The words of a section written so far, read back (header_counts::rewritten_later only): a
    // build that must turn a streamed level back into a table.
    std::vector<uint64_t> words_of(size_t section) const;
    // The final header and every section's parameter words, over those first written
    // (header_counts::rewritten_later only; each must keep its encoded size).
    void rewrite(index_header const& header, std::span<std::vector<uint64_t> const> params);
    void commit();

  private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

// When the checksum over the whole file is compared.
enum class index_check {
    at_open,  // before the constructor returns (reads every page of the file)
    // Later, by the caller, through checksum_matches(): the structure (magic, version, header,
    // section bounds) is still checked at open, without reading the section words, so a query of
    // a host-sized index answers its first read at once and checks the sum while it works.
    deferred
};

// Where the loaded file's bytes live.
enum class index_memory {
    // The file mapped read-only: the pages are the page cache's, shared by every process that
    // maps the same index, and come in as they are touched (the first read is answered at once).
    mapped,
    // Read once into private memory on 2 MiB transparent huge pages: a lookup then costs no TLB
    // miss (a mapped host-sized index spans millions of 4 KiB pages), at the price of reading the
    // whole file before the first lookup. Peak RSS stays one copy: read() fills it from the page
    // cache without mapping that too.
    huge_pages
};

// A loaded index: the header and views of the sections, valid while this object lives (the file is
// memory-mapped read-only).
class index_file {
  public:
    // Throws index_error (bad/damaged/foreign/newer file) or input_error (cannot open).
    // poll() is called between the 4 MiB pieces of a huge-page copy and may throw to abandon the
    // load (qmer query passes its interrupt check: Ctrl-C during the seconds a host-sized index
    // takes to read acts at once). A huge-page copy reads with up to copy_threads threads (the
    // calling thread among them).
    explicit index_file(std::string path, index_check check = index_check::at_open,
                        index_memory memory = index_memory::mapped,
                        std::function<void()> const& poll = {}, unsigned copy_threads = 1);

    // The file's checksum against the stored one (reads every page; safe from any thread while
    // the sections are mapped). check_checksum() throws index_error naming the file on a mismatch.
    bool checksum_matches() const;
    void check_checksum() const;
    ~index_file();
    index_file(index_file&&) noexcept;
    index_file(index_file const&) = delete;
    index_file& operator=(index_file const&) = delete;
    index_file& operator=(index_file&& other) noexcept;

    // Unmaps the file once a filter has copied what it needs: the sections become empty, the
    // header stays. Without it a query would hold the index twice (mapped file + filter).
    void release_sections() noexcept;

    index_header const& header() const noexcept { return header_; }
    std::vector<index_section_view> const& sections() const noexcept { return sections_; }
    std::string const& path() const noexcept { return path_; }
    size_t file_bytes() const noexcept { return size_; }

  private:
    std::string path_;
    void* map_ = nullptr;  // the file's first byte (mapped or copied)
    size_t size_ = 0;
    void* region_ = nullptr;  // what to unmap: the mapping, or the huge-page copy's region
    size_t region_bytes_ = 0;
    uint64_t device_ = 0, inode_ = 0;         // the file mapped (the sum reads it again by name)
    std::optional<bool> copied_sum_matches_;  // huge_pages: the checksum, computed while copying
    void unmap() noexcept;
    void copy_to_huge_pages(int fd, std::function<void()> const& poll, unsigned copy_threads);
    uint64_t stored_checksum() const noexcept;  // the file's last 8 bytes
    index_header header_;
    std::vector<index_section_view> sections_;
};

}  // namespace qmer::io
