#include "io/chunked_paired_reader.hpp"

#include <utility>

#include "core/error.hpp"
#include "io/detail/pair_messages.hpp"

namespace qmer::io {

chunked_paired_reader::chunked_paired_reader(std::string path1, std::string path2,
                                             reader_options options, chunk_sizes sizes)
    : hold_above_(sizes.resolved(options, true).target) {
    // Opened in this order, as paired_reader opens them: the first file's problem is told first.
    readers_.push_back(std::make_unique<chunked_reader>(std::move(path1), options, sizes));
    readers_.push_back(std::make_unique<chunked_reader>(std::move(path2), options, sizes));
}

chunked_paired_reader::chunked_paired_reader(std::string interleaved_path, reader_options options,
                                             chunk_sizes sizes)
    : chunked_paired_reader(chunked_reader(std::move(interleaved_path), options, sizes)) {}

// One file's records are never held back (hold_above_ matters to two files only).
chunked_paired_reader::chunked_paired_reader(chunked_reader&& one_file) {
    readers_.push_back(std::make_unique<chunked_reader>(std::move(one_file)));
    chunked_reader& reader = *readers_[0];
    reader.follow_mate_flags(reader.flagged_paired() ? mate_flags::mates : mate_flags::uniform);
}

chunked_paired_reader::~chunked_paired_reader() = default;

bool chunked_paired_reader::cut(paired_chunk& chunk) {
    size_t const files = readers_.size();
    bool const all_used_up = used_up_[0] && (files == 1 || used_up_[1]);
    if (all_used_up) return false;
    chunk.cut_ = {false, false};
    chunk.used_up_ = {false, false};
    for (size_t s = 0; s < files; ++s) {
        chunk.parsed_[s].clear();
        if (used_up_[s]) continue;
        // A file whose records wait for their mates (its reads are shorter, or it was cut
        // further) is held back while the other one goes on.
        bool const other_goes_on = files == 2 && !used_up_[1 - s];
        if (other_goes_on && kept_bytes_[s].load(std::memory_order_relaxed) > hold_above_) continue;
        if (readers_[s]->cut(chunk.text_[s], chunk.parsed_[s]))
            chunk.cut_[s] = true;
        else
            used_up_[s] = chunk.used_up_[s] = true;
    }
    // A chunk may carry nothing (both files seen held back at once, from the settling stage's
    // changing counts): the settling stage passes it through.
    return true;
}

void chunked_paired_reader::parse(paired_chunk& chunk) {
    for (size_t s = 0; s < 2; ++s)
        if (chunk.cut_[s]) chunked_reader::parse(chunk.text_[s], chunk.parsed_[s]);
}

void chunked_paired_reader::settle(paired_chunk& chunk, paired_batch& pairs) {
    for (size_t s = 0; s < readers_.size(); ++s) take_chunk(chunk, s);
    uint64_t const first_pair = pairs_ + 1;
    pairs.first.clear(first_pair);
    pairs.second.clear(first_pair);
    if (interleaved()) {
        size_t const formed = pair_interleaved();
        side const& d = sides_[0];
        for (size_t i = 0; i < formed; ++i) {
            sequence_record const a = d[2 * i], b = d[2 * i + 1];
            pairs.first.append(a.name, a.comment, a.sequence, a.quality);
            pairs.second.append(b.name, b.comment, b.sequence, b.quality);
        }
        keep_rest(0, 2 * formed, &chunk.parsed_[0]);
    } else {
        size_t const formed = pair_files();
        for (size_t s = 0; s < 2; ++s) {
            side& d = sides_[s];
            record_batch& out = s == 0 ? pairs.first : pairs.second;
            if (d.kept.empty() && d.fresh != nullptr && d.fresh->size() == formed) {
                out.swap(*d.fresh);  // the usual case: both files cut at the same records
                out.set_first_record_number(first_pair);
                d.fresh = nullptr;
            } else {
                for (size_t i = 0; i < formed; ++i) {
                    sequence_record const r = d[i];
                    out.append(r.name, r.comment, r.sequence, r.quality);
                }
            }
            keep_rest(s, formed, &chunk.parsed_[s]);
        }
    }
}

// This chunk's records of file s, after those kept, and what follows them.
void chunked_paired_reader::take_chunk(paired_chunk& chunk, size_t s) {
    side& d = sides_[s];
    d.fresh = nullptr;
    // After a problem, the file's later chunks are never read: the problem comes first.
    if (d.after != side::then::more) return;
    if (chunk.cut_[s]) {
        chunked_reader::settled const told =
            readers_[s]->settle_and_tell(chunk.text_[s], chunk.parsed_[s]);
        d.fresh = &chunk.parsed_[s];
        if (told.problem) {
            d.after = side::then::fails;
            d.problem = told.problem;
        } else if (told.last) {
            d.after = side::then::end;
        }
    }
    if (chunk.used_up_[s] && d.after == side::then::more) d.after = side::then::end;
}

chunked_paired_reader::read chunked_paired_reader::peek(size_t s, size_t at) const {
    side const& d = sides_[s];
    if (at < d.size()) return read::record;
    switch (d.after) {
        case side::then::more:
            return read::wait;
        case side::then::end:
            return read::end;
        case side::then::fails:
            break;
    }
    std::rethrow_exception(d.problem);
}

// paired_reader's read_pair over two files, pair after pair, until a record not read yet is
// needed: returns the pairs made.
size_t chunked_paired_reader::pair_files() {
    size_t made = 0;
    for (;;) {
        read const a = peek(0, made);
        if (a == read::wait) break;
        read const b = peek(1, made);
        if (b == read::wait) break;
        if ((a == read::record) != (b == read::record)) {
            std::string const& shorter = readers_[a == read::record ? 1 : 0]->path();
            std::string const& longer = readers_[a == read::record ? 0 : 1]->path();
            throw input_error(detail::files_out_of_step(shorter, longer, pairs_ + 1));
        }
        if (a == read::end) break;
        ++pairs_;
        check_names(sides_[0][made], sides_[1][made]);
        ++made;
    }
    return made;
}

// The same over one interleaved file (mate 1, mate 2, mate 1, ...).
size_t chunked_paired_reader::pair_interleaved() {
    size_t made = 0;
    for (;;) {
        read const a = peek(0, 2 * made);
        if (a != read::record) break;
        read const b = peek(0, 2 * made + 1);
        if (b == read::wait) break;
        if (b == read::end) {
            throw input_error(
                detail::odd_interleaved(readers_[0]->path(), pairs_ + 1, sides_[0][2 * made].name));
        }
        ++pairs_;
        check_names(sides_[0][2 * made], sides_[0][2 * made + 1]);
        ++made;
    }
    return made;
}

void chunked_paired_reader::check_names(sequence_record const& a, sequence_record const& b) const {
    if (mate_base_name(a.name) == mate_base_name(b.name)) return;
    std::string const where =
        interleaved() ? detail::pair_in_interleaved(readers_[0]->path(), pairs_)
                      : detail::pair_in_files(readers_[0]->path(), readers_[1]->path(), pairs_);
    throw input_error(detail::mate_names_differ(where, a.name, b.name));
}

// Keeps file s's records from `from` on for the next chunk (and tells the input stage how much
// that is). `fresh_batch` is the chunk's batch the fresh records were in, free to take the kept
// ones' place when all of them are kept.
void chunked_paired_reader::keep_rest(size_t s, size_t from, record_batch* fresh_batch) {
    side& d = sides_[s];
    size_t const total = d.size();
    if (from >= total) {
        d.kept.clear();
    } else if (from == 0 && d.kept.empty() && d.fresh != nullptr) {
        d.kept.swap(*fresh_batch);  // every fresh record kept: no copy
    } else {
        spare_.clear();
        for (size_t i = from; i < total; ++i) {
            sequence_record const r = d[i];
            spare_.append(r.name, r.comment, r.sequence, r.quality);
        }
        d.kept.swap(spare_);
    }
    d.fresh = nullptr;
    kept_bytes_[s].store(d.kept.stored_bytes(), std::memory_order_relaxed);
}

}  // namespace qmer::io
