#include "io/seqan/flatfile_reader.hpp"

#include <istream>
#include <optional>
#include <seqan3/io/sequence_file/input.hpp>
#include <string_view>
#include <utility>

#include "core/error.hpp"

namespace qmer::io {
namespace {

// Characters in, characters out: SeqAn3 only drops the spaces and digits of the sequence block.
// (The default traits would read dna5 and the dna4 ones would turn N into A.)
struct character_traits : seqan3::sequence_file_input_default_traits_dna {
    using sequence_alphabet = char;
    using sequence_legal_alphabet = char;
    template <typename alphabet>
    using sequence_container = std::basic_string<alphabet>;
    template <typename alphabet>
    using id_container = std::basic_string<alphabet>;
};

using flatfile_input =
    seqan3::sequence_file_input<character_traits,
                                seqan3::fields<seqan3::field::id, seqan3::field::seq>,
                                seqan3::type_list<seqan3::format_embl, seqan3::format_genbank>>;

flatfile_input open_input(std::istream& in, flatfile_format format) {
    flatfile_input file = format == flatfile_format::genbank
                              ? flatfile_input{in, seqan3::format_genbank{}}
                              : flatfile_input{in, seqan3::format_embl{}};
    // The name is the first word of the LOCUS / ID line, not the whole line.
    file.options.truncate_ids = true;
    return file;
}

}  // namespace

struct flatfile_reader::impl {
    impl(std::istream& in, flatfile_format f, std::string p)
        : path(std::move(p)), file(open_input(in, f)) {}
    std::string path;
    flatfile_input file;
    std::optional<decltype(file.begin())> at;
};

flatfile_reader::flatfile_reader(std::istream& in, flatfile_format format, std::string path) {
    try {
        impl_ = std::make_unique<impl>(in, format, path);
    } catch (input_error const&) {
        throw;
    } catch (std::exception const& e) {
        throw input_error(path + ": " + e.what());
    }
}

flatfile_reader::~flatfile_reader() = default;

bool flatfile_reader::read(record_batch& batch, uint64_t number) {
    try {
        // SeqAn3 reads a record when its iterator is created or advanced, so parse errors of
        // record `number` surface here.
        if (!impl_->at) {
            impl_->at.emplace(impl_->file.begin());
        } else {
            ++*impl_->at;
        }
        if (*impl_->at == impl_->file.end()) return false;
        auto& record = **impl_->at;
        std::string_view name = record.id();
        if (!name.empty() && name.back() == ';') name.remove_suffix(1);  // EMBL "ID   K02675;"
        batch.append(name, {}, record.sequence(), {});
        return true;
    } catch (input_error const&) {
        throw;
    } catch (std::exception const& e) {
        throw input_error(impl_->path + ": record " + std::to_string(number) + ": " + e.what());
    }
}

}  // namespace qmer::io
