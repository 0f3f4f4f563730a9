#include "app/index/reference_reading.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace qmer::app {

bool reference_stream::cut(reference_chunk& chunk) {
    chunk.problem = nullptr;
    chunk.batch.clear();
    while (!failed_) {
        if (!reader_) {
            if (next_path_ == refs_.paths.size()) return false;
            try {
                io::chunk_sizes sizes;
                sizes.target = piece_bytes_;
                reader_ = std::make_shared<io::chunked_reader>(
                    refs_.paths[next_path_], options_, sizes,
                    io::detail::record_split{piece_bytes_, refs_.k - 1});
            } catch (...) {
                chunk.reader = nullptr;
                chunk.file = next_path_;
                chunk.problem = std::current_exception();
                failed_ = true;
                return true;
            }
            ++next_path_;
        }
        chunk.reader = reader_;
        chunk.file = next_path_ - 1;
        if (reader_->cut(chunk.text, chunk.batch)) return true;
        reader_.reset();
    }
    return false;
}

void reference_stream::parse(reference_chunk& chunk) const {
    chunk.holds_a_kmer = false;
    if (!chunk.reader) return;
    io::chunked_reader::parse(chunk.text, chunk.batch);
    for (io::sequence_record const r : chunk.batch)
        if (holds_a_kmer(r.sequence, refs_.k)) {
            chunk.holds_a_kmer = true;
            break;
        }
}

void reference_stream::settle(reference_chunk& chunk) {
    try {
        if (chunk.problem) std::rethrow_exception(chunk.problem);
        chunk.reader->settle(chunk.text, chunk.batch);
        if (chunk.holds_a_kmer) holds_kmers_[chunk.file] = true;
    } catch (input_error const& e) {
        std::string const& path = refs_.paths[chunk.file];
        std::string const& name = refs_.names[chunk.file];
        std::string message = e.what();
        if (path != name && message.starts_with(path))
            throw input_error(name + message.substr(path.size()));
        throw;
    }
}

void reference_stream::tally(reference_chunk const& chunk, build_counts& counts) {
    io::record_batch const& batch = chunk.batch;
    bool const continues = chunk.text.continues_record() && !batch.empty();
    size_t const repeated = continues ? chunk.text.repeated_bases() : 0;
    counts.records += batch.size() - (continues ? 1 : 0);
    counts.bases += batch.sequence_bytes() - repeated;
    for (size_t i = 0; i < batch.size(); ++i) {
        uint64_t const bases = batch[i].sequence.size();
        record_bases_ = i == 0 && continues ? record_bases_ + bases - repeated : bases;
        counts.longest_record = std::max(counts.longest_record, record_bases_);
    }
}

bool reference_stream::next(reference_chunk& chunk) {
    while (cut(chunk)) {
        parse(chunk);
        settle(chunk);
        if (!chunk.batch.empty()) return true;
    }
    return false;
}

void reference_stream::check_every_reference_held_a_kmer() const {
    if (refs_.allow_empty) return;
    for (size_t f = 0; f < refs_.names.size(); ++f)
        if (!holds_kmers_[f])
            throw input_error(refs_.names[f] + ": no k-mer in it (k = " + std::to_string(refs_.k) +
                              "): it is empty, only N, or every record is shorter than k; "
                              "give --allow-empty to index it all the same");
}

bool rereadable(std::string const& path) {
    std::error_code ec;
    return path != "-" && std::filesystem::is_regular_file(path, ec);
}

bool all_rereadable(std::vector<std::string> const& paths) {
    for (auto const& p : paths)
        if (!rereadable(p)) return false;
    return true;
}

uint64_t estimate_kmers_from_sizes(std::vector<std::string> const& paths) {
    uint64_t total = 0;
    for (auto const& path : paths) {
        if (path == "-") continue;
        std::error_code ec;
        auto const size = std::filesystem::file_size(path, ec);
        if (ec) continue;
        unsigned char magic[2] = {0, 0};
        if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
            if (std::fread(magic, 1, 2, f) != 2) magic[0] = 0;
            std::fclose(f);
        }
        bool const gzip = magic[0] == 0x1f && magic[1] == 0x8b;
        total += gzip ? 4 * size : size;
    }
    return total;
}

std::string temp_folder(std::string const& temp_dir, std::string const& output) {
    if (!temp_dir.empty()) return temp_dir;
    std::string folder = std::filesystem::path(output).parent_path().string();
    return folder.empty() ? "." : folder;
}

void copy_what_cannot_be_read_twice(index_options& o, std::string const& folder,
                                    std::vector<std::unique_ptr<io::spill_file>>& copies,
                                    progress_meter& progress) {
    if (all_rereadable(o.references)) return;
    progress.begin_phase("copying what cannot be read twice to a scratch file", 0, "", false);
    o.read_from.clear();
    for (auto const& reference : o.references) {
        if (rereadable(reference)) {
            o.read_from.push_back(reference);
            continue;
        }
        copies.push_back(std::make_unique<io::spill_file>(folder));
        copies.back()->copy_from(reference);
        o.read_from.push_back(copies.back()->proc_path());
    }
}

}  // namespace qmer::app
