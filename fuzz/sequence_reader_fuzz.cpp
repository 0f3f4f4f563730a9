// Fuzz target: io::sequence_reader over arbitrary file contents.
//
// The input is a file's bytes (plain, gzip, BGZF, zstd, xz or bzip2; FASTA, FASTQ, SAM/BAM/CRAM,
// GenBank, EMBL or garbage). Allowed outcomes: every record read, or qmer::input_error. Anything
// else is a bug and aborts: a sanitizer report, another exception type, a hang (libFuzzer's
// -timeout).
//
// Oracles beyond "no crash":
//   - the reader is run twice, once in batches of a tiny byte budget (many batch boundaries) and
//     once record by record with one BGZF inflating thread where the input is BGZF (bgzf_mt's
//     separate code path): both must agree on success or failure and, on success, hand out the
//     same records byte for byte. A difference is silently wrong output.
//   - the chunked reader (io/chunked_reader.hpp, the input of qmer's pipelines) reads it a third
//     time, in chunks of a few bytes (a cut every record or inside one), all cut first and then
//     parsed last to first, then settled in order: it must accept or refuse as the serial reader
//     does, with the same message when it refuses, and the same records.
//   - FASTQ records have as many quality bytes as bases; FASTA/FASTQ records hold no NUL byte
//     (sequence_reader.hpp promises both); batches number their records consecutively;
//     records_read() counts them all; the end of input stays the end.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "fuzz_support.hpp"
#include "io/chunked_reader.hpp"
#include "io/detail/stream_decoder.hpp"
#include "io/sequence_reader.hpp"

namespace {

using qmer::fuzz::fail;
using qmer::io::record_batch;
using qmer::io::sequence_format;
using qmer::io::sequence_reader;

// Appends one record to a digest string: each field length-prefixed, so that field boundaries
// count (a byte moved from the name to the comment is a difference).
void digest_record(std::string& digest, qmer::io::sequence_record const& r) {
    for (std::string_view field : {r.name, r.comment, r.sequence, r.quality}) {
        digest += std::to_string(field.size());
        digest += ':';
        digest += field;
    }
    digest += '\n';
}

void check_record(sequence_format format, qmer::io::sequence_record const& r) {
    if (format == sequence_format::fastq && r.quality.size() != r.sequence.size())
        fail("FASTQ record with " + std::to_string(r.sequence.size()) + " bases and " +
             std::to_string(r.quality.size()) + " quality bytes passed the reader");
    if (format == sequence_format::fasta || format == sequence_format::fastq) {
        for (std::string_view field : {r.name, r.comment, r.sequence, r.quality})
            if (field.find('\0') != std::string_view::npos)
                fail("a FASTA/FASTQ record holding a NUL byte passed the reader");
    }
}

// The records of the file, or nullopt when the reader refused it with input_error.
std::optional<std::string> read_in_batches(std::string const& path) {
    try {
        qmer::io::reader_options options;
        options.batch_bytes = 64;  // many batches even for a few-KB input
        sequence_reader reader(path, options);
        std::string digest;
        record_batch batch;
        uint64_t records = 0;
        while (reader.next_batch(batch)) {
            if (batch.empty()) fail("next_batch returned true with an empty batch");
            if (batch.first_record_number() != records + 1)
                fail("batch numbered from " + std::to_string(batch.first_record_number()) +
                     " after " + std::to_string(records) + " records");
            for (auto const& r : batch) {
                check_record(reader.format(), r);
                digest_record(digest, r);
            }
            records += batch.size();
        }
        if (!batch.empty()) fail("next_batch returned false but left records in the batch");
        if (reader.next_batch(batch)) fail("next_batch returned a batch after the end");
        if (reader.records_read() != records)
            fail("records_read() = " + std::to_string(reader.records_read()) + " but " +
                 std::to_string(records) + " records were handed out");
        if (reader.format() == sequence_format::empty && records != 0)
            fail("an input detected as empty produced records");
        return digest;
    } catch (qmer::input_error const&) {
        return std::nullopt;
    } catch (...) {
        qmer::fuzz::fail_with_current_exception("sequence_reader (batches)");
    }
}

std::optional<std::string> read_one_by_one(std::string const& path, unsigned threads) {
    try {
        qmer::io::reader_options options;
        options.decompression_threads = threads;
        sequence_reader reader(path, options);
        std::string digest;
        record_batch batch;
        while (reader.read_record(batch)) {
            if (batch.size() != 1) fail("read_record did not append exactly one record");
            check_record(reader.format(), batch[0]);
            digest_record(digest, batch[0]);
            batch.clear();
        }
        if (reader.read_record(batch)) fail("read_record returned a record after the end");
        return digest;
    } catch (qmer::input_error const&) {
        return std::nullopt;
    } catch (...) {
        qmer::fuzz::fail_with_current_exception("sequence_reader (one by one)");
    }
}

// The records as chunked_reader gives them, or the message it refused the input with. A chunk of
// `target` bytes; every chunk is cut before any is parsed, and they are parsed last to first, the
// order no pipeline keeps but one it may take.
struct chunked_reading {
    std::string digest;
    std::optional<std::string> error;
};
chunked_reading read_chunked(std::string const& path, size_t target) {
    chunked_reading out;
    try {
        qmer::io::chunk_sizes sizes;
        sizes.target = target;
        sizes.most = 4 * target;
        qmer::io::chunked_reader reader(path, {}, sizes);
        struct slot {
            qmer::io::text_chunk chunk;
            record_batch batch;
        };
        std::vector<std::unique_ptr<slot>> slots;
        for (;;) {
            auto s = std::make_unique<slot>();
            if (!reader.cut(s->chunk, s->batch)) break;
            slots.push_back(std::move(s));
        }
        for (size_t i = slots.size(); i-- > 0;)
            qmer::io::chunked_reader::parse(slots[i]->chunk, slots[i]->batch);
        uint64_t records = 0;
        for (auto& s : slots) {
            reader.settle(s->chunk, s->batch);
            if (!s->batch.empty() && s->batch.first_record_number() != records + 1)
                fail("chunked: batch numbered from " +
                     std::to_string(s->batch.first_record_number()) + " after " +
                     std::to_string(records) + " records");
            for (auto const& r : s->batch) {
                check_record(reader.format(), r);
                digest_record(out.digest, r);
            }
            records += s->batch.size();
        }
        if (reader.records_read() != records) fail("chunked: records_read() is wrong");
    } catch (qmer::input_error const& e) {
        out.error = e.what();
    } catch (...) {
        qmer::fuzz::fail_with_current_exception("chunked_reader");
    }
    return out;
}

// The serial reader's message for an input it refuses (read in batches), or nullopt.
std::optional<std::string> serial_error(std::string const& path) {
    try {
        sequence_reader reader(path);
        record_batch batch;
        while (reader.next_batch(batch)) {
        }
    } catch (qmer::input_error const& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

bool looks_like_bgzf(uint8_t const* data, size_t size) {
    // gzip magic, deflate, FEXTRA set: BGZF (and BAM, which is BGZF) carry their block size there.
    return size >= 4 && data[0] == 0x1f && data[1] == 0x8b && data[2] == 8 && (data[3] & 4) != 0;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // A CRAM input without its reference would make htslib fetch it from the EBI server by MD5.
    // Point the reference search at a folder that does not exist: offline, fast, deterministic.
    ::setenv("REF_PATH", "/nonexistent-qmer-fuzz-ref/%s", 1);
    ::setenv("REF_CACHE", "/nonexistent-qmer-fuzz-ref/%s", 1);
    return 0;
}

// Whether a zstd, xz or bzip2 input decodes to more than `limit` bytes of text: a few kilobytes of
// such data can stand for gigabytes (zstd's repeated blocks, bzip2's runs), which the readers
// would read three times, correctly but past libFuzzer's time limit. Those inputs are skipped; the
// decoders' own limits (memory, damage, truncation) are tested by tests/io/detail/.
bool expands_past(uint8_t const* data, size_t size, size_t limit) {
    std::string_view const in(reinterpret_cast<char const*>(data), size);
    auto const kind = qmer::io::detail::compression_of(in.substr(0, qmer::io::detail::magic_bytes));
    if (kind == qmer::io::detail::compression::none) return false;
    auto decoder = qmer::io::detail::make_stream_decoder(kind);
    std::vector<char> out(size_t{1} << 20);
    size_t used = 0, produced = 0;
    for (;;) {
        auto const step = decoder->decode(in.substr(used), out, true);
        used += step.consumed;
        produced += step.produced;
        if (produced > limit) return true;
        if (step.ended || decoder->failed() || (step.consumed == 0 && step.produced == 0))
            return false;
    }
}

extern "C" int LLVMFuzzerTestOneInput(uint8_t const* data, size_t size) {
    if (expands_past(data, size, size_t{16} << 20)) return 0;
    static qmer::fuzz::memory_file file;
    std::string const& path = file.set(data, size);

    auto const batched = read_in_batches(path);
    auto const single = read_one_by_one(path, looks_like_bgzf(data, size) ? 1 : 0);
    if (batched.has_value() != single.has_value())
        fail(std::string("the reader ") + (batched ? "accepted" : "refused") +
             " the input in batches but " + (single ? "accepted" : "refused") +
             " it record by record" + (looks_like_bgzf(data, size) ? " with a BGZF thread" : ""));
    if (batched && *batched != *single)
        fail("batched and record-by-record reading gave different records");
    // A chunk size from the input's length: many cuts, some inside records.
    auto const chunked = read_chunked(path, 1 + size % 23);
    if (batched.has_value() == chunked.error.has_value())
        fail(std::string("the serial reader ") + (batched ? "accepted" : "refused") +
             " the input but the chunked reader " + (chunked.error ? "refused" : "accepted") +
             " it" + (chunked.error ? ": " + *chunked.error : std::string()));
    if (batched && *batched != chunked.digest)
        fail("the chunked reader gave other records than the serial reader");
    if (!batched) {
        std::optional<std::string> const serial = serial_error(path);
        if (serial && *serial != *chunked.error)
            fail("the chunked reader refused with '" + *chunked.error +
                 "', the serial reader with '" + *serial + "'");
    }
    return 0;
}
