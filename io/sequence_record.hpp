#pragma once
// Sequence records and the reusable batch that carries them from the serial input stage to the
// parallel k-mer stage (ARCHITECTURE.md, "Data flow").
//
// A record_batch stores every byte of its records in one flat buffer (name, comment, sequence and
// quality of record 0, then of record 1, ...) and one small fixed-size entry of offsets per record.
// clear() keeps both capacities, so refilling a batch of the same shape allocates nothing: in the
// steady state of a pipeline that recycles its batches, reading costs no allocation per record.
// Records are handed out as views (sequence_record) into that buffer; they stay valid until the
// batch is cleared or appended to.
//
// Bytes are kept as they are in the file: no case change, no base conversion (the k-mer scanner
// decides what a base is). Quality is empty for FASTA, GenBank and EMBL records and for
// SAM/BAM/CRAM records stored without qualities.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace qmer::io {

// One record, as views into the batch that holds it.
struct sequence_record {
    std::string_view name;      // the header up to the first whitespace
    std::string_view comment;   // the rest of the header line after that whitespace (may be empty)
    std::string_view sequence;  // as in the file, line breaks removed
    std::string_view quality;   // empty unless the input carries qualities
};

class record_batch {
  public:
    // A few MB of sequence per batch: large enough that per-batch costs (a pipeline token, a task)
    // vanish, small enough that a handful of batches in flight stay in L3-sized working sets.
    static constexpr size_t default_byte_budget = size_t{4} << 20;

    record_batch() = default;
    // A moved-from batch is empty and owns no memory (its capacity is reset with the buffer).
    record_batch(record_batch&& other) noexcept { swap(other); }
    record_batch& operator=(record_batch&& other) noexcept {
        record_batch(std::move(other)).swap(*this);
        return *this;
    }
    record_batch(record_batch const& other) { *this = other; }
    record_batch& operator=(record_batch const& other) {
        if (this != &other) {
            clear(other.first_record_);
            reserve_bytes(other.used_);
            if (other.used_ != 0) std::memcpy(bytes_.get(), other.bytes_.get(), other.used_);
            used_ = other.used_;
            entries_ = other.entries_;
            sequence_bytes_ = other.sequence_bytes_;
        }
        return *this;
    }

    void swap(record_batch& other) noexcept {
        std::swap(bytes_, other.bytes_);
        std::swap(capacity_, other.capacity_);
        std::swap(used_, other.used_);
        std::swap(sequence_bytes_, other.sequence_bytes_);
        std::swap(first_record_, other.first_record_);
        entries_.swap(other.entries_);
    }

    // The rule readers fill batches by: stop once the sequence bytes reach the budget, or once all
    // bytes reach 4x it (long names, qualities), or once there are max(1024, budget / 8) records
    // (so that a file of empty records cannot put all of them, at 40 bytes of entry each, into one
    // batch). Reads of 150 bp under the default budget stop on the first rule, at ~28,000 records.
    static bool budget_reached(size_t sequence_bytes, size_t stored_bytes, size_t records,
                               size_t budget) noexcept {
        size_t const record_cap = budget / 8 > 1024 ? budget / 8 : 1024;
        return sequence_bytes >= budget || stored_bytes >= 4 * budget || records >= record_cap;
    }

    // Forgets the records, keeps the memory. first_record_number is the 1-based number (in its
    // input) of the record that will be appended first.
    void clear(uint64_t first_record_number = 1) noexcept {
        used_ = 0;
        entries_.clear();
        sequence_bytes_ = 0;
        first_record_ = first_record_number;
    }

    // Renumbers the batch: for records parsed before their place in the input was known (a chunk
    // parsed on another thread, io/chunked_reader.hpp).
    void set_first_record_number(uint64_t first_record_number) noexcept {
        first_record_ = first_record_number;
    }

    size_t size() const noexcept { return entries_.size(); }
    bool empty() const noexcept { return entries_.empty(); }
    // 1-based number of records()[0] in its input (for paired input: the number of the pair).
    uint64_t first_record_number() const noexcept { return first_record_; }
    // Total sequence bytes held: what the byte budget of a reader counts.
    size_t sequence_bytes() const noexcept { return sequence_bytes_; }
    // All bytes held (names, comments, sequences, qualities).
    size_t stored_bytes() const noexcept { return used_; }

    sequence_record operator[](size_t i) const noexcept {
        entry const& e = entries_[i];
        char const* p = bytes_.get() + e.offset;
        sequence_record r;
        r.name = {p, e.name_length};
        p += e.name_length;
        r.comment = {p, e.comment_length};
        p += e.comment_length;
        r.sequence = {p, e.sequence_length};
        p += e.sequence_length;
        r.quality = {p, e.quality_length};
        return r;
    }

    // Appends a record by copying the four fields.
    void append(std::string_view name, std::string_view comment, std::string_view sequence,
                std::string_view quality) {
        char* p =
            append_uninitialized(name.size(), comment.size(), sequence.size(), quality.size());
        copy_into(p, name);
        copy_into(p, comment);
        copy_into(p, sequence);
        copy_into(p, quality);
    }

    // Appends a record whose fields the caller writes itself (e.g. decoding BAM's 4-bit bases
    // straight into the batch): returns where the name starts; comment, sequence and quality follow
    // contiguously in that order with the given lengths. The pointer is valid until the next
    // append.
    char* append_uninitialized(size_t name_length, size_t comment_length, size_t sequence_length,
                               size_t quality_length) {
        size_t const total = name_length + comment_length + sequence_length + quality_length;
        reserve_bytes(used_ + total);
        entries_.push_back({used_, sequence_length, quality_length,
                            static_cast<uint32_t>(name_length),
                            static_cast<uint32_t>(comment_length)});
        char* p = bytes_.get() + used_;
        used_ += total;
        sequence_bytes_ += sequence_length;
        return p;
    }

    // Removes the last record (used by readers that find a record malformed after appending it).
    void pop_back() noexcept {
        entry const& e = entries_.back();
        used_ = e.offset;
        sequence_bytes_ -= e.sequence_length;
        entries_.pop_back();
    }

    class iterator {
      public:
        using value_type = sequence_record;
        using difference_type = std::ptrdiff_t;
        iterator() = default;
        iterator(record_batch const* b, size_t i) : batch_(b), index_(i) {}
        sequence_record operator*() const { return (*batch_)[index_]; }
        iterator& operator++() {
            ++index_;
            return *this;
        }
        iterator operator++(int) {
            iterator old = *this;
            ++index_;
            return old;
        }
        bool operator==(iterator const& o) const noexcept { return index_ == o.index_; }

      private:
        record_batch const* batch_ = nullptr;
        size_t index_ = 0;
    };
    iterator begin() const noexcept { return {this, 0}; }
    iterator end() const noexcept { return {this, entries_.size()}; }

  private:
    struct entry {
        size_t offset;
        size_t sequence_length;
        size_t quality_length;
        uint32_t name_length;  // headers longer than 4 GiB are not a thing readers produce
        uint32_t comment_length;
    };

    static void copy_into(char*& p, std::string_view s) noexcept {
        if (!s.empty()) std::memcpy(p, s.data(), s.size());
        p += s.size();
    }

    // Grows geometrically, copying only the bytes in use. A plain char array, not std::string or
    // std::vector<char>: those zero-fill on resize, which would write every byte twice.
    void reserve_bytes(size_t needed) {
        if (needed <= capacity_) return;
        size_t grown = capacity_ < 4096 ? 4096 : capacity_;
        while (grown < needed) grown *= 2;
        std::unique_ptr<char[]> fresh(new char[grown]);
        if (used_ != 0) std::memcpy(fresh.get(), bytes_.get(), used_);
        bytes_ = std::move(fresh);
        capacity_ = grown;
    }

    std::unique_ptr<char[]> bytes_;
    size_t capacity_ = 0;
    size_t used_ = 0;
    size_t sequence_bytes_ = 0;
    uint64_t first_record_ = 1;
    std::vector<entry> entries_;
};

}  // namespace qmer::io
