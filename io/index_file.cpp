#include "io/index_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
// The checksum's XXH3 compiled here, inlined: its SSE2 loop retires about a third fewer
// instructions than Debian's shared libxxhash (callgrind, bench/MEASUREMENTS.md), and a host-sized
// index is summed before its first read is answered.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "io/detail/whole_transfer.hpp"
#include "io/output_file.hpp"

namespace qmer::io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the index format stores little-endian words; big-endian hosts need byte swapping");

constexpr char magic[8] = {'Q', 'M', 'E', 'R', 'I', 'D', 'X', '\0'};
constexpr uint32_t byte_order_mark = 0x01020304;
constexpr uint64_t section_tag = 0x5443455352454d51ULL;  // "QMERSECT"
constexpr uint64_t end_tag = 0x444e4552454d51ULL;        // "QMEREND"
constexpr size_t prefix_bytes = 8 + 4 + 4 + 8;
constexpr size_t trailer_bytes = 3 * 8;  // end tag, section count, checksum
constexpr size_t words_alignment = 64;
constexpr char const* checksum_mismatch =
    "damaged index: checksum mismatch (the file changed after it was written): rebuild it";

// Little helpers to build and parse the header; every field has a fixed width.
struct byte_buffer {
    std::string bytes;
    template <typename T>
    void put(T value) {
        bytes.append(reinterpret_cast<char const*>(&value), sizeof value);
    }
    void put_string(std::string const& s) {
        put<uint64_t>(s.size());
        bytes += s;
    }
};

class byte_parser {
  public:
    byte_parser(char const* data, size_t size, std::string const& path)
        : p_(data), end_(data + size), path_(path) {}
    template <typename T>
    T get() {
        need(sizeof(T));
        T value;
        std::memcpy(&value, p_, sizeof value);
        p_ += sizeof value;
        return value;
    }
    std::string get_string() {
        auto const n = get<uint64_t>();
        need(n);
        std::string s(p_, n);
        p_ += n;
        return s;
    }
    size_t remaining() const noexcept { return static_cast<size_t>(end_ - p_); }

  private:
    void need(uint64_t n) const {
        if (n > static_cast<uint64_t>(end_ - p_))
            throw index_error("'" + path_ + "': damaged index header (field runs past its end)");
    }
    char const* p_;
    char const* end_;
    std::string const& path_;
};

std::string encode_header(index_header const& h) {
    byte_buffer b;
    b.put<uint32_t>(h.k);
    b.put<uint64_t>(h.hash_seed);
    b.put_string(h.filter);
    b.put<double>(h.fpr);
    b.put<uint64_t>(h.expected);
    b.put<uint64_t>(h.elements);
    b.put<uint64_t>(h.kmers_scanned);
    b.put<uint64_t>(h.filter_params.size());
    for (uint64_t p : h.filter_params) b.put<uint64_t>(p);
    b.put_string(h.qmer_version);
    b.put_string(h.command);
    b.put<uint64_t>(h.inputs.size());
    for (auto const& s : h.inputs) b.put_string(s);
    b.put<uint32_t>(static_cast<uint32_t>(h.hash.scheme));
    b.put<uint32_t>(h.hash.minimizer_length);
    b.put<uint32_t>(h.hash.window_bits);
    b.put<uint64_t>(h.hash.overloaded.size());
    for (uint64_t w : h.hash.overloaded) b.put<uint64_t>(w);
    if (!h.preset.empty()) {
        b.put_string(h.preset);
        b.put<double>(h.preset_min_containment);
    }
    return std::move(b.bytes);
}

// The hash scheme of a format-4 header, checked so that a damaged one is refused at open rather
// than answering "absent" for every k-mer.
void decode_hash_scheme(byte_parser& in, index_header& h, std::string const& path) {
    auto damaged = [&](char const* what) {
        return index_error("'" + path + "': damaged index header (" + what + ")");
    };
    auto const scheme = in.get<uint32_t>();
    h.hash.minimizer_length = in.get<uint32_t>();
    h.hash.window_bits = in.get<uint32_t>();
    auto const words = in.get<uint64_t>();
    if (scheme > static_cast<uint32_t>(hash_scheme::minimizer_local_levels))
        throw index_error("'" + path + "': unknown hash scheme " + std::to_string(scheme) +
                          " (built by a newer qmer?)");
    h.hash.scheme = static_cast<hash_scheme>(scheme);
    if (h.hash.scheme == hash_scheme::minimizer_local_levels && h.format_version < 6)
        throw damaged("hash scheme 2 before format 6");
    if (h.hash.scheme == hash_scheme::plain) {
        if (words != 0) throw damaged("plain hash scheme with a window bitmap");
        return;
    }
    if (h.hash.minimizer_length < 1 || h.hash.minimizer_length > h.k ||
        h.k - h.hash.minimizer_length + 1 > minimizer_scanner::max_window)
        throw damaged("minimizer length out of range");
    if (h.hash.window_bits < 1 || h.hash.window_bits > max_window_bits)
        throw damaged("window bits out of range");
    if ((words != 0 && words != ((uint64_t{1} << h.hash.window_bits) + 63) / 64) ||
        words > in.remaining() / 8)
        throw damaged("window bitmap of the wrong size");
    h.hash.overloaded.resize(words);
    for (auto& w : h.hash.overloaded) w = in.get<uint64_t>();
}

// The preset's fields after the hash scheme, checked: a damaged minimum containment would call
// reads by a rule nobody chose.
void decode_preset(byte_parser& in, index_header& h, std::string const& path) {
    h.preset = in.get_string();
    h.preset_min_containment = in.get<double>();
    double const c = h.preset_min_containment;
    if (h.preset.empty() || !(c <= 1) || (c < 0 && c != -1))
        throw index_error("'" + path +
                          "': damaged index header (preset or its minimum containment)");
}

index_header decode_header(char const* data, size_t size, uint32_t version,
                           std::string const& path) {
    byte_parser in(data, size, path);
    index_header h;
    h.format_version = version;
    h.k = in.get<uint32_t>();
    h.hash_seed = in.get<uint64_t>();
    h.filter = in.get_string();
    h.fpr = in.get<double>();
    h.expected = in.get<uint64_t>();
    h.elements = in.get<uint64_t>();
    h.kmers_scanned = in.get<uint64_t>();
    auto const n_params = in.get<uint64_t>();
    if (n_params > size / 8) throw index_error("'" + path + "': damaged index header");
    for (uint64_t i = 0; i < n_params; ++i) h.filter_params.push_back(in.get<uint64_t>());
    h.qmer_version = in.get_string();
    h.command = in.get_string();
    auto const n_inputs = in.get<uint64_t>();
    if (n_inputs > size / 8) throw index_error("'" + path + "': damaged index header");
    for (uint64_t i = 0; i < n_inputs; ++i) h.inputs.push_back(in.get_string());
    if (h.k < 1 || h.k > 32)
        throw index_error("'" + path + "': damaged index header (k out of range)");
    if (version >= 4) decode_hash_scheme(in, h, path);
    if (version >= 4 && in.remaining() > 0) decode_preset(in, h, path);
    return h;
}

// XXH3-64 over bytes given in order.
struct xxh3_stream {
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state{XXH3_createState(),
                                                                   &XXH3_freeState};
    xxh3_stream() {
        if (!state) throw std::bad_alloc();
        XXH3_64bits_reset(state.get());
    }
    void update(void const* bytes, size_t size) { XXH3_64bits_update(state.get(), bytes, size); }
    uint64_t digest() const { return XXH3_64bits_digest(state.get()); }
    void reset() { XXH3_64bits_reset(state.get()); }
};

// The format version a file's bytes 8-11 state (0 when it is shorter): which checksum rule to
// sum it by, before anything else of it is checked.
uint32_t stated_version(int fd, size_t size) {
    uint32_t version = 0;
    if (size >= 12 && ::pread(fd, &version, sizeof version, 8) != sizeof version) version = 0;
    return version;
}

// index_checksum_head of `size` bytes whose 64-bit word at an offset word(offset) reads (offsets
// always leave room for the word): the layout's walk, where a field that runs past the bytes ends
// the head at `size` and a missing section marker ends it before that word.
template <typename Word>
uint64_t head_of(uint64_t size, Word&& word) {
    if (size < prefix_bytes) return size;
    uint64_t const header_bytes = word(16);
    if (header_bytes > size - prefix_bytes) return size;
    uint64_t at = (prefix_bytes + header_bytes + 7) / 8 * 8;
    for (;;) {
        if (at > size || size - at < 16) return size;
        if (word(at) != section_tag) return at;
        uint64_t const params = word(at + 8);
        at += 16;
        if (params >= (size - at) / 8) return size;  // no room for them and the word count
        at += 8 * params;
        uint64_t const words = word(at);
        at = (at + 8 + words_alignment - 1) / words_alignment * words_alignment;
        if (at > size) return size;
        if (words != 0) return at;
    }
}

// The head of the bytes [0, size) of fd sums (a file less its last 8 bytes). A word that cannot be
// read counts as 0: the read that sums the file then fails on it and reports why.
uint64_t head_of_file(int fd, uint64_t size) {
    return head_of(size, [fd](uint64_t at) {
        uint64_t w = 0;
        if (::pread(fd, &w, sizeof w, static_cast<off_t>(at)) != sizeof w) w = 0;
        return w;
    });
}

}  // namespace

uint64_t index_checksum_head(void const* bytes, size_t size) {
    return head_of(size, [bytes](uint64_t at) {
        uint64_t w;
        std::memcpy(&w, static_cast<char const*>(bytes) + at, sizeof w);
        return w;
    });
}

struct index_checksum_stream::impl {
    bool piecewise;
    bool head_open;                  // format 8 on, until end_head()
    uint64_t piece_left;             // bytes still to come in the current piece
    xxh3_stream sum{};               // the whole stream, or the current piece's
    uint64_t in_piece = 0;           // bytes of the current piece
    std::vector<uint64_t> pieces{};  // digests of the finished pieces

    void end_piece() {
        if (in_piece > 0) pieces.push_back(sum.digest());
        sum.reset();
        in_piece = 0;
        piece_left = checksum_piece_bytes;
    }
};

index_checksum_stream::index_checksum_stream(uint32_t format_version,
                                             std::optional<uint64_t> head_bytes) {
    bool const piecewise = format_version >= piecewise_checksum_since;
    bool const head = format_version >= checksum_head_since;
    bool const open = head && !head_bytes.has_value();
    // An open head ends at end_head() alone; a head of 0 bytes (of no bytes) is no piece.
    uint64_t const first = !head || (head_bytes && *head_bytes == 0) ? checksum_piece_bytes
                           : open                                    ? UINT64_MAX
                                                                     : *head_bytes;
    impl_ = std::make_unique<impl>(impl{piecewise, open, first});
}

index_checksum_stream::~index_checksum_stream() = default;

void index_checksum_stream::update(void const* bytes, size_t size) {
    impl& s = *impl_;
    if (!s.piecewise) {
        s.sum.update(bytes, size);
        return;
    }
    auto const* p = static_cast<char const*>(bytes);
    while (size > 0) {
        size_t const n = static_cast<size_t>(std::min<uint64_t>(size, s.piece_left));
        s.sum.update(p, n);
        s.in_piece += n;
        if (!s.head_open) s.piece_left -= n;
        p += n;
        size -= n;
        if (s.piece_left == 0) s.end_piece();
    }
}

void index_checksum_stream::end_head() {
    if (!impl_->head_open) throw std::logic_error("index_checksum_stream: no open head to end");
    impl_->head_open = false;
    impl_->end_piece();
}

uint64_t index_checksum_stream::digest(
    std::span<std::pair<uint64_t, uint64_t> const> replaced) const {
    impl const& s = *impl_;
    if (!s.piecewise) {
        if (!replaced.empty()) throw std::logic_error("index_checksum_stream: not piecewise");
        return s.sum.digest();
    }
    std::vector<uint64_t> digests = s.pieces;
    if (s.in_piece > 0) digests.push_back(s.sum.digest());
    for (auto const& [piece, sum] : replaced) {
        if (piece >= digests.size()) throw std::logic_error("index_checksum_stream: no such piece");
        digests[piece] = sum;
    }
    return XXH3_64bits(digests.data(), digests.size() * sizeof(uint64_t));
}

uint64_t index_checksum(uint32_t format_version, void const* bytes, size_t size) {
    index_checksum_stream sum(format_version, format_version >= checksum_head_since
                                                  ? std::optional(index_checksum_head(bytes, size))
                                                  : std::nullopt);
    sum.update(bytes, size);
    return sum.digest();
}

namespace {

// The checksum stream of the file fd of `size` bytes, by the rule of the version it states.
std::unique_ptr<index_checksum_stream> file_checksum_stream(int fd, size_t size) {
    uint32_t const version = stated_version(fd, size);
    size_t const summed = size >= 8 ? size - 8 : 0;
    return std::make_unique<index_checksum_stream>(
        version,
        version >= checksum_head_since ? std::optional(head_of_file(fd, summed)) : std::nullopt);
}

// Reads bytes [0, size) of fd, at most `piece` bytes at a time, each piece into place(offset)
// (room for it), and sums all but the last 8 bytes (the stored checksum) by the rule of the
// version the file states (index_checksum) while each piece is still in cache. error: the errno of
// a failed read, -1 for a file shorter than size.
struct read_result {
    int error = 0;
    uint64_t sum = 0;
};
template <typename Place>
read_result read_and_sum(int fd, size_t size, size_t piece, Place&& place) {
    auto const sum = file_checksum_stream(fd, size);
    size_t const summed = size >= 8 ? size - 8 : 0;
    for (size_t done = 0; done < size;) {
        char* const at = place(done);
        size_t const n = std::min(size - done, piece);
        if (int const e = detail::pread_whole(fd, at, n, done); e != 0) return {e, 0};
        if (done < summed) sum->update(at, std::min(summed, done + n) - done);
        done += n;
    }
    return {0, sum->digest()};
}

// Copies bytes [0, size) of fd into `out` in pieces of `piece` bytes and sums all but the last 8
// as read_and_sum does, but with up to `threads` threads reading pieces at once:
// most of a copy into fresh memory is the kernel's (faulting in and zeroing the huge pages,
// copying out of the page cache), and that scales with threads. The calling thread sums the pieces
// in file order, each as soon as it
// has arrived, and reads pieces itself while the next one to sum is still on its way. poll() runs
// on the calling thread between pieces; when it throws, the other threads finish the piece they
// hold and stop before it is rethrown.
read_result copy_and_sum(int fd, size_t size, char* out, size_t piece, unsigned threads,
                         std::function<void()> const& poll) {
    size_t const pieces = (size + piece - 1) / piece;
    size_t const summed = size >= 8 ? size - 8 : 0;
    // Per piece: 0 not read yet, 1 read, 2 failed (the error is in `error`). Every piece that is
    // claimed ends as 1 or 2, so the summing thread may wait for a claimed one.
    std::vector<std::atomic<uint8_t>> state(pieces);
    std::atomic<size_t> next{0};
    std::atomic<bool> stop{false};
    std::atomic<int> error{0};
    // Claims the next piece and reads it; false when none is left or the copy stopped.
    auto read_one = [&]() -> bool {
        if (stop.load(std::memory_order_relaxed)) return false;
        size_t const i = next.fetch_add(1, std::memory_order_relaxed);
        if (i >= pieces) return false;
        size_t const begin = i * piece, end = std::min(size, begin + piece);
        uint8_t outcome = 1;
        if (int const e = detail::pread_whole(fd, out + begin, end - begin, begin); e != 0) {
            int expected = 0;
            error.compare_exchange_strong(expected, e);
            stop.store(true, std::memory_order_relaxed);
            outcome = 2;
        }
        // Release: the summing thread's acquire load of the state then sees the piece's bytes.
        state[i].store(outcome, std::memory_order_release);
        state[i].notify_one();
        return true;
    };

    auto const sum = file_checksum_stream(fd, size);
    {
        std::vector<std::jthread> helpers;
        // Declared after the helpers, so destroyed first: whatever way this block is left, the
        // helpers are told to stop before they are joined.
        struct stopper {
            std::atomic<bool>& stop;
            ~stopper() { stop.store(true, std::memory_order_relaxed); }
        } const stop_helpers{stop};
        unsigned const wanted = static_cast<unsigned>(
            std::min<size_t>(std::max(threads, 1u), pieces == 0 ? 1 : pieces));
        for (unsigned t = 1; t < wanted; ++t)
            helpers.emplace_back([&] {
                while (read_one()) {
                }
            });
        for (size_t i = 0; i < pieces; ++i) {
            if (poll) poll();
            // Read pieces until piece i has arrived (some other thread may hold it).
            while (state[i].load(std::memory_order_acquire) == 0 && read_one()) {
            }
            // Unclaimed only after a failure stopped the copy (claims go in file order).
            if (next.load(std::memory_order_relaxed) <= i) break;
            state[i].wait(0, std::memory_order_acquire);
            if (state[i].load(std::memory_order_acquire) != 1) break;
            size_t const begin = i * piece, end = std::min(summed, begin + piece);
            if (begin < end) sum->update(out + begin, end - begin);
        }
    }
    if (int const e = error.load(); e != 0) return {e, 0};
    return {0, sum->digest()};
}

}  // namespace

struct index_writer::impl {
    output_file out;
    index_checksum_stream sum{index_format_version};  // of everything written, as written
    uint64_t offset = 0;
    bool rewritable = false;  // header_counts::rewritten_later
    // The checksum's head (index_checksum_head): every byte written until end_head().
    bool in_head = true;
    uint64_t head_bytes = 0;  // its length, once it has ended
    std::string head;         // rewritable: its bytes, as rewritten
    bool head_rewritten = false;
    std::vector<uint64_t> rewritten_pieces;  // pieces after the head whose bytes rewrite() changed
    uint64_t header_offset = 0;
    size_t header_bytes = 0;
    // Where each section's parameter words and words lie, and how many there are of each.
    struct placed {
        uint64_t params_at;
        size_t params;
        uint64_t words_at;
        uint64_t words;
    };
    std::vector<placed> placed_sections;
    uint64_t pending = 0;  // the open streamed section's words still to come
    bool open = false;

    // Never compressed, whatever the name: an index is memory-mapped as it lies on disk. Written
    // past the page cache: gigabytes written once (io/detail/uncached_writer.hpp); but the first
    // buffer through it (a cached_prefix of one byte), which holds the head: its rewrite then
    // changes pages in the cache instead of reading them from the device first.
    explicit impl(std::string path)
        : out(std::move(path), {.compress_by_name = false, .uncached = true, .cached_prefix = 1}) {}

    void write(void const* data, size_t n) {
        out.write(data, n);
        sum.update(data, n);
        if (in_head && rewritable) head.append(static_cast<char const*>(data), n);
        offset += n;
    }
    void end_head() {
        if (!in_head) return;
        in_head = false;
        head_bytes = offset;
        sum.end_head();
    }
    // The part of [at, at + n) in the head goes into its copy too; the pieces after the head
    // that the rest lies in are read back at the end.
    void rewrite_at(uint64_t at, void const* data, size_t n) {
        if (n == 0) return;
        out.write_at(at, data, n);
        if (at < head.size()) {
            size_t const in = static_cast<size_t>(std::min<uint64_t>(n, head.size() - at));
            std::memcpy(head.data() + at, data, in);
            head_rewritten = true;
        }
        if (in_head || at + n <= head_bytes) return;
        uint64_t const first = std::max(at, head_bytes) - head_bytes,
                       last = at + n - 1 - head_bytes;
        for (uint64_t p = 1 + first / checksum_piece_bytes; p <= 1 + last / checksum_piece_bytes;
             ++p)
            if (std::find(rewritten_pieces.begin(), rewritten_pieces.end(), p) ==
                rewritten_pieces.end())
                rewritten_pieces.push_back(p);
    }
    template <typename T>
    void write_value(T value) {
        write(&value, sizeof value);
    }
    void pad_to(size_t alignment) {
        static constexpr char zeros[64] = {};
        size_t const pad = (alignment - offset % alignment) % alignment;
        write(zeros, pad);
    }
    // Everything before a section's words; the first words end the head.
    void prelude(std::span<uint64_t const> params, uint64_t word_count) {
        if (open) throw std::logic_error("index_writer: a section began before the last ended");
        write_value<uint64_t>(section_tag);
        write_value<uint64_t>(params.size());
        uint64_t const params_at = offset;
        write(params.data(), params.size_bytes());
        write_value<uint64_t>(word_count);
        pad_to(words_alignment);  // so the mapped words are cache-line aligned
        placed_sections.push_back({params_at, params.size(), offset, word_count});
        if (word_count > 0) end_head();
    }
    // The checksum of everything written: a rewritten head summed again from its copy, other
    // rewritten pieces read back (in 4 MiB reads) and summed again.
    uint64_t checksum() {
        std::vector<std::pair<uint64_t, uint64_t>> replaced;
        if (head_rewritten) replaced.emplace_back(0, XXH3_64bits(head.data(), head.size()));
        std::vector<char> buffer;
        for (uint64_t p : rewritten_pieces) {
            buffer.resize(size_t{4} << 20);
            xxh3_stream piece;
            uint64_t const begin = head_bytes + (p - 1) * checksum_piece_bytes;
            uint64_t const end = std::min(offset, begin + checksum_piece_bytes);
            for (uint64_t at = begin; at < end; at += buffer.size()) {
                size_t const n = static_cast<size_t>(std::min<uint64_t>(buffer.size(), end - at));
                out.read_at(at, buffer.data(), n);
                piece.update(buffer.data(), n);
            }
            replaced.emplace_back(p, piece.digest());
        }
        return sum.digest(replaced);
    }
};

index_writer::index_writer(std::string path, index_header const& header, header_counts counts)
    : impl_(std::make_unique<impl>(std::move(path))) {
    impl_->rewritable = counts == header_counts::rewritten_later;
    if (impl_->rewritable && !impl_->out.can_rewrite())
        throw std::logic_error("index_writer: a stream cannot be rewritten");
    std::string const encoded = encode_header(header);
    impl_->write(magic, sizeof magic);
    impl_->write_value<uint32_t>(index_format_version);
    impl_->write_value<uint32_t>(byte_order_mark);
    impl_->write_value<uint64_t>(encoded.size());
    impl_->header_offset = impl_->offset;
    impl_->header_bytes = encoded.size();
    impl_->write(encoded.data(), encoded.size());
    impl_->pad_to(8);
}

index_writer::~index_writer() = default;

bool index_writer::can_rewrite(std::string const& path) {
    return !is_direct_output(path);
}

void index_writer::add_section(std::span<uint64_t const> params, std::span<uint64_t const> words) {
    impl_->prelude(params, words.size());
    impl_->write(words.data(), words.size_bytes());
}

void index_writer::begin_section(std::span<uint64_t const> params, uint64_t word_count) {
    impl_->prelude(params, word_count);
    impl_->open = true;
    impl_->pending = word_count;
}

void index_writer::put(std::span<uint64_t const> words) {
    if (!impl_->open || words.size() > impl_->pending)
        throw std::logic_error("index_writer: a section got more words than announced");
    impl_->pending -= words.size();
    impl_->write(words.data(), words.size_bytes());
}

void index_writer::end_section() {
    if (!impl_->open || impl_->pending != 0)
        throw std::logic_error("index_writer: a section got fewer words than announced");
    impl_->open = false;
}

void index_writer::add_section(std::span<uint64_t const> params, uint64_t word_count,
                               std::function<void(word_sink const&)> const& fill) {
    begin_section(params, word_count);
    fill([&](std::span<uint64_t const> chunk) { put(chunk); });
    end_section();
}

std::vector<uint64_t> index_writer::words_of(size_t section) const {
    auto const& placed = impl_->placed_sections;
    if (!impl_->rewritable || section >= placed.size())
        throw std::logic_error("index_writer: words_of needs a rewritable file and a section");
    bool const open = impl_->open && section + 1 == placed.size();
    std::vector<uint64_t> out(placed[section].words - (open ? impl_->pending : 0));
    impl_->out.read_at(placed[section].words_at, out.data(), out.size() * sizeof(uint64_t));
    return out;
}

void index_writer::rewrite(index_header const& header,
                           std::span<std::vector<uint64_t> const> params) {
    if (!impl_->rewritable)
        throw std::logic_error("index_writer: made without header_counts::rewritten_later");
    std::string const encoded = encode_header(header);
    auto const& placed = impl_->placed_sections;
    bool same_sizes = encoded.size() == impl_->header_bytes && params.size() == placed.size();
    for (size_t j = 0; same_sizes && j < params.size(); ++j)
        same_sizes = params[j].size() == placed[j].params;
    if (!same_sizes)
        throw std::logic_error("index_writer: a rewrite changed the header's or a section's size");
    impl_->rewrite_at(impl_->header_offset, encoded.data(), encoded.size());
    for (size_t j = 0; j < params.size(); ++j)
        impl_->rewrite_at(placed[j].params_at, params[j].data(),
                          params[j].size() * sizeof(uint64_t));
}

void index_writer::commit() {
    if (impl_->open) throw std::logic_error("index_writer: committed inside a section");
    impl_->end_head();  // no section had words: the head ends at the end marker
    impl_->write_value<uint64_t>(end_tag);
    impl_->write_value<uint64_t>(impl_->placed_sections.size());
    uint64_t const checksum = impl_->checksum();
    impl_->out.write(&checksum, sizeof checksum);
    impl_->out.commit();
}

index_file::index_file(std::string path, index_check check, index_memory memory,
                       std::function<void()> const& poll, unsigned copy_threads)
    : path_(std::move(path)) {
    auto const fail = [&](std::string const& what) -> index_error {
        return index_error("'" + path_ + "': " + what);
    };
    int const fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw input_error("'" + path_ + "': cannot open index: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw fail("not a regular file, so not a qmer index");
    }
    size_ = static_cast<size_t>(st.st_size);
    device_ = static_cast<uint64_t>(st.st_dev);
    inode_ = static_cast<uint64_t>(st.st_ino);
    if (size_ > 0 && memory == index_memory::huge_pages) {
        try {
            copy_to_huge_pages(fd, poll, copy_threads);
        } catch (...) {
            unmap();  // a throwing constructor runs no destructor
            ::close(fd);
            throw;
        }
    } else if (size_ > 0) {
        // Checked at open, every page is read at once: populating the mapping saves the faults.
        // Deferred, pages come in as lookups touch them (a query of one read touches a few).
        int const populate = check == index_check::at_open ? MAP_POPULATE : 0;
        map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | populate, fd, 0);
        if (map_ == MAP_FAILED) {
            map_ = nullptr;
            int const err = errno;
            ::close(fd);
            throw fail(std::string("cannot map index: ") + std::strerror(err));
        }
        region_ = map_;
        region_bytes_ = size_;
    }
    ::close(fd);
    // A constructor that throws runs no destructor: unmap here, or every refused file stays
    // mapped for the rest of the process (found by fuzz/index_loader_fuzz).
    try {
        auto const* bytes = static_cast<char const*>(map_);

        if (size_ < sizeof magic || std::memcmp(bytes, magic, sizeof magic) != 0) {
            if (size_ > 0 && (bytes[0] == '>' || bytes[0] == '@'))
                throw fail(
                    "this is a FASTA/FASTQ file, not a qmer index (build one with 'qmer index')");
            if (size_ >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
                static_cast<unsigned char>(bytes[1]) == 0x8b)
                throw fail("this is a gzip file, not a qmer index (build one with 'qmer index')");
            throw fail("not a qmer index (no QMERIDX magic)");
        }
        if (size_ < prefix_bytes + trailer_bytes) throw fail("truncated index");
        uint32_t version, bom;
        uint64_t header_bytes;
        std::memcpy(&version, bytes + 8, 4);
        std::memcpy(&bom, bytes + 12, 4);
        std::memcpy(&header_bytes, bytes + 16, 8);
        if (version > index_format_version)
            throw fail("index format version " + std::to_string(version) +
                       " is newer than this qmer reads (" + std::to_string(index_format_version) +
                       "): use a newer qmer or rebuild the index");
        if (version < 1) throw fail("damaged index (format version 0)");
        if (bom != byte_order_mark)
            throw fail("index written on a machine of another byte order: rebuild it here");
        uint64_t tag;
        std::memcpy(&tag, bytes + size_ - trailer_bytes, 8);
        if (tag != end_tag) throw fail("truncated or damaged index (no end marker): rebuild it");
        uint64_t section_count;
        std::memcpy(&section_count, bytes + size_ - 16, 8);
        if (check == index_check::at_open) check_checksum();
        // A header or section table that does not parse: with the checksum deferred, say whether
        // the file was damaged after it was written (the usual cause), as a check at open would.
        try {
            if (header_bytes > size_ - prefix_bytes - trailer_bytes)
                throw fail("damaged index header");

            header_ = decode_header(bytes + prefix_bytes, header_bytes, version, path_);
            size_t offset = (prefix_bytes + header_bytes + 7) / 8 * 8;
            size_t const end = size_ - trailer_bytes;
            auto read_word = [&](size_t at) {
                if (at + 8 > end) throw fail("damaged index (section runs past the end)");
                uint64_t w;
                std::memcpy(&w, bytes + at, 8);
                return w;
            };
            for (uint64_t s = 0; s < section_count; ++s) {
                if (read_word(offset) != section_tag)
                    throw fail("damaged index (bad section marker)");
                uint64_t const n_params = read_word(offset + 8);
                offset += 16;
                if (n_params > (end - offset) / 8) throw fail("damaged index (bad section)");
                index_section_view view;
                for (uint64_t i = 0; i < n_params; ++i)
                    view.params.push_back(read_word(offset + 8 * i));
                offset += 8 * n_params;
                uint64_t const n_words = read_word(offset);
                offset += 8;
                offset = (offset + words_alignment - 1) / words_alignment * words_alignment;
                if (offset > end || n_words > (end - offset) / 8)
                    throw fail("damaged index (bad section)");
                view.words = {reinterpret_cast<uint64_t const*>(bytes + offset), n_words};
                offset += 8 * n_words;
                sections_.push_back(std::move(view));
            }
            if (offset != end)
                throw fail("damaged index (unexpected bytes after the last section)");
        } catch (index_error const&) {
            if (check == index_check::deferred) check_checksum();
            throw;
        }
    } catch (...) {
        unmap();
        throw;
    }
}

void index_file::copy_to_huge_pages(int fd, std::function<void()> const& poll,
                                    unsigned copy_threads) {
    // A region 2 MiB larger than the file, so that its copy can start on a 2 MiB boundary (the
    // kernel backs only aligned 2 MiB ranges with huge pages).
    constexpr size_t huge = size_t{2} << 20;
    region_bytes_ = (size_ + 2 * huge - 1) / huge * huge;
    region_ = ::mmap(nullptr, region_bytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region_ == MAP_FAILED) {
        region_ = nullptr;
        throw index_error("'" + path_ +
                          "': cannot allocate memory for the index: " + std::strerror(errno));
    }
    auto const base = (reinterpret_cast<uintptr_t>(region_) + huge - 1) / huge * huge;
    map_ = reinterpret_cast<void*>(base);
#ifdef MADV_HUGEPAGE
    // Advice: a kernel without transparent huge pages gives 4 KiB pages, slower but correct.
    (void)::madvise(map_, (size_ + huge - 1) / huge * huge, MADV_HUGEPAGE);
#endif
    // The checksum is computed as the bytes arrive, each 4 MiB piece soon after it is read, so
    // checking it costs no second pass over the file.
    auto const read =
        copy_and_sum(fd, size_, static_cast<char*>(map_), size_t{4} << 20, copy_threads, poll);
    if (read.error != 0)
        throw input_error(
            "'" + path_ + "': cannot read index: " +
            (read.error > 0 ? std::strerror(read.error) : "the file shrank while read"));
    copied_sum_matches_ = size_ >= 8 && read.sum == stored_checksum();
    // Read-only from here on, as the mapped form is.
    (void)::mprotect(region_, region_bytes_, PROT_READ);
}

void index_file::unmap() noexcept {
    if (region_) ::munmap(region_, region_bytes_);
    region_ = map_ = nullptr;
    region_bytes_ = 0;
}

void index_file::check_checksum() const {
    if (!checksum_matches()) throw index_error("'" + path_ + "': " + checksum_mismatch);
}

bool index_file::checksum_matches() const {
    if (map_ == nullptr || size_ < prefix_bytes + trailer_bytes) return false;
    if (copied_sum_matches_.has_value()) return *copied_sum_matches_;  // summed while copied
    // Mapped: read the file through a small buffer rather than touching the mapping, so the sum
    // neither faults in every page (a host-sized index has a million) nor makes them all
    // resident in this process; read() from the page cache runs at memory speed. The file read
    // must be the one mapped (the name may have been given to another file since).
    int const fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd >= 0 && ::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_dev) == device_ &&
        static_cast<uint64_t>(st.st_ino) == inode_) {
        std::vector<char> buffer(size_t{256} << 10);  // stays in L2 between read and hash
        auto const read =
            read_and_sum(fd, size_, buffer.size(), [&](size_t) { return buffer.data(); });
        ::close(fd);
        return read.error == 0 && read.sum == stored_checksum();
    }
    if (fd >= 0) ::close(fd);
    uint32_t version;
    std::memcpy(&version, static_cast<char const*>(map_) + 8, sizeof version);
    return index_checksum(version, map_, size_ - 8) == stored_checksum();
}

uint64_t index_file::stored_checksum() const noexcept {
    uint64_t stored;
    std::memcpy(&stored, static_cast<char const*>(map_) + size_ - 8, 8);
    return stored;
}

index_file::index_file(index_file&& other) noexcept
    : path_(std::move(other.path_)),
      map_(std::exchange(other.map_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      region_(std::exchange(other.region_, nullptr)),
      region_bytes_(std::exchange(other.region_bytes_, 0)),
      device_(other.device_),
      inode_(other.inode_),
      copied_sum_matches_(std::exchange(other.copied_sum_matches_, std::nullopt)),
      header_(std::move(other.header_)),
      sections_(std::move(other.sections_)) {}

index_file& index_file::operator=(index_file&& other) noexcept {
    if (this != &other) {
        unmap();
        path_ = std::move(other.path_);
        map_ = std::exchange(other.map_, nullptr);
        size_ = std::exchange(other.size_, 0);
        region_ = std::exchange(other.region_, nullptr);
        region_bytes_ = std::exchange(other.region_bytes_, 0);
        device_ = other.device_;
        inode_ = other.inode_;
        copied_sum_matches_ = std::exchange(other.copied_sum_matches_, std::nullopt);
        header_ = std::move(other.header_);
        sections_ = std::move(other.sections_);
    }
    return *this;
}

void index_file::release_sections() noexcept {
    sections_.clear();
    unmap();
}

index_file::~index_file() {
    unmap();
}

}  // namespace qmer::io
