#include "io/paired_reader.hpp"

#include <utility>

#include "core/error.hpp"
#include "io/detail/pair_messages.hpp"

namespace qmer::io {

std::string_view mate_base_name(std::string_view name) noexcept {
    if (name.size() >= 2 && name[name.size() - 2] == '/' &&
        (name.back() == '1' || name.back() == '2')) {
        name.remove_suffix(2);
    }
    return name;
}

paired_reader::paired_reader(std::string path1, std::string path2, reader_options options)
    : options_(options), first_(std::move(path1), options) {
    second_.emplace(std::move(path2), options);
}

paired_reader::paired_reader(std::string interleaved_path, reader_options options)
    : options_(options), first_(std::move(interleaved_path), options) {
    first_.follow_mate_flags(first_.flagged_paired() ? mate_flags::mates : mate_flags::uniform);
}

std::string const& paired_reader::path2() const noexcept {
    static std::string const none;
    return second_ ? second_->path() : none;
}

bool paired_reader::read_pair(paired_batch& batch) {
    uint64_t const pair = pairs_ + 1;
    if (!second_) {
        if (!first_.read_record(batch.first)) return false;
        if (!first_.read_record(batch.second)) {
            std::string const lone(batch.first[batch.first.size() - 1].name);
            batch.first.pop_back();
            throw input_error(detail::odd_interleaved(first_.path(), pair, lone));
        }
    } else {
        bool const got1 = first_.read_record(batch.first);
        bool const got2 = second_->read_record(batch.second);
        if (got1 != got2) {
            if (got1) batch.first.pop_back();
            if (got2) batch.second.pop_back();
            std::string const& shorter = got1 ? second_->path() : first_.path();
            std::string const& longer = got1 ? first_.path() : second_->path();
            throw input_error(detail::files_out_of_step(shorter, longer, pair));
        }
        if (!got1) return false;
    }
    ++pairs_;
    check_names(batch);
    return true;
}

void paired_reader::check_names(paired_batch const& batch) const {
    std::string_view const name1 = batch.first[batch.first.size() - 1].name;
    std::string_view const name2 = batch.second[batch.second.size() - 1].name;
    if (mate_base_name(name1) == mate_base_name(name2)) return;
    std::string const where = second_
                                  ? detail::pair_in_files(first_.path(), second_->path(), pairs_)
                                  : detail::pair_in_interleaved(first_.path(), pairs_);
    throw input_error(detail::mate_names_differ(where, name1, name2));
}

bool paired_reader::next_batch(paired_batch& batch) {
    batch.first.clear(pairs_ + 1);
    batch.second.clear(pairs_ + 1);
    // Same rule as sequence_reader::next_batch, over both mates together.
    auto full = [&] {
        return record_batch::budget_reached(
            batch.first.sequence_bytes() + batch.second.sequence_bytes(),
            batch.first.stored_bytes() + batch.second.stored_bytes(), 2 * batch.size(),
            options_.batch_bytes);
    };
    while (batch.empty() || !full()) {
        if (!read_pair(batch)) break;
    }
    return !batch.empty();
}

}  // namespace qmer::io
