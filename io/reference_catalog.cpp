#include "io/reference_catalog.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace qmer::io {
namespace {

// Bytes appended little-endian (the index's byte order, checked by its byte-order mark).
class byte_writer {
  public:
    void u32(uint32_t v) { raw(&v, sizeof v); }
    void u64(uint64_t v) { raw(&v, sizeof v); }
    void text(std::string const& s) {
        u32(static_cast<uint32_t>(s.size()));
        raw(s.data(), s.size());
    }
    std::vector<uint64_t> words() const {
        std::vector<uint64_t> out((bytes_.size() + 7) / 8, 0);
        if (!bytes_.empty()) std::memcpy(out.data(), bytes_.data(), bytes_.size());
        return out;
    }

  private:
    void raw(void const* p, size_t n) {
        auto const* c = static_cast<char const*>(p);
        bytes_.insert(bytes_.end(), c, c + n);
    }
    std::vector<char> bytes_;
};

// Reads what byte_writer wrote; every read is bounded by the words (a damaged section is an
// error, never a read past it).
class byte_reader {
  public:
    explicit byte_reader(std::span<uint64_t const> words)
        : p_(reinterpret_cast<char const*>(words.data())), left_(words.size_bytes()) {}
    uint32_t u32() {
        uint32_t v;
        raw(&v, sizeof v);
        return v;
    }
    uint64_t u64() {
        uint64_t v;
        raw(&v, sizeof v);
        return v;
    }
    std::string text() {
        uint32_t const n = u32();
        if (n > left_) throw std::invalid_argument("reference catalog: a name past its end");
        std::string s(p_, n);
        p_ += n;
        left_ -= n;
        return s;
    }
    size_t left() const noexcept { return left_; }

  private:
    void raw(void* out, size_t n) {
        if (n > left_) throw std::invalid_argument("reference catalog: cut short");
        std::memcpy(out, p_, n);
        p_ += n;
        left_ -= n;
    }
    char const* p_;
    size_t left_;
};

}  // namespace

std::vector<uint64_t> reference_catalog::params() const {
    return {catalog_tag, references.size(), classes.size(), value_bits, escaped};
}

std::vector<uint64_t> reference_catalog::words() const {
    byte_writer w;
    for (auto const& r : references) {
        w.text(r.name);
        w.text(r.group);
        w.text(r.source);
        w.u64(r.kmers);
        w.u64(r.unique_kmers);
    }
    for (size_t c = 0; c < classes.size(); ++c) {
        auto const m = classes.members(c);
        w.u32(static_cast<uint32_t>(m.size()));
        for (uint32_t const id : m) w.u32(id);
    }
    return w.words();
}

reference_catalog reference_catalog::read(std::span<uint64_t const> params,
                                          std::span<uint64_t const> words) {
    if (!is_catalog(params)) throw std::invalid_argument("reference catalog: not one");
    uint64_t const n = params[1], classes = params[2];
    if (n == 0 || params[3] < 1 || params[3] > 32 || classes == 0 || classes > words.size() * 2 ||
        n > words.size())
        throw std::invalid_argument("reference catalog: bad counts");
    reference_catalog c;
    c.value_bits = static_cast<unsigned>(params[3]);
    c.escaped = params[4];
    if (c.escaped == 0 && classes > (uint64_t{1} << c.value_bits))
        throw std::invalid_argument("reference catalog: more classes than its ids can name");
    byte_reader r(words);
    for (uint64_t i = 0; i < n; ++i) {
        reference_info info;
        info.name = r.text();
        info.group = r.text();
        info.source = r.text();
        info.kmers = r.u64();
        info.unique_kmers = r.u64();
        c.references.push_back(std::move(info));
    }
    std::vector<uint64_t> offsets{0};
    std::vector<uint32_t> members;
    for (uint64_t i = 0; i < classes; ++i) {
        uint32_t const size = r.u32();
        if (size == 0 || size > n || uint64_t{size} * 4 > r.left())
            throw std::invalid_argument("reference catalog: bad class size");
        for (uint32_t j = 0; j < size; ++j) members.push_back(r.u32());
        offsets.push_back(members.size());
    }
    if (r.left() >= 8) throw std::invalid_argument("reference catalog: words past its end");
    c.classes = qf::class_table(std::move(offsets), std::move(members), n);
    return c;
}

class_overflow::class_overflow(std::span<uint64_t const> words, unsigned id_bits)
    : words_(words), id_bits_(id_bits) {
    if (id_bits < 1 || id_bits > 32) throw std::invalid_argument("class overflow: bad id bits");
    for (size_t i = 1; i < words.size(); ++i)
        if ((words[i] >> id_bits) <= (words[i - 1] >> id_bits))
            throw std::invalid_argument("class overflow: fingerprints out of order");
}

uint64_t class_overflow::find(uint64_t fp) const noexcept {
    // The first entry whose fingerprint is at least fp: entries are fp << id_bits | id, sorted.
    auto const it = std::lower_bound(words_.begin(), words_.end(), fp << id_bits_);
    if (it == words_.end() || (*it >> id_bits_) != fp) return UINT64_MAX;
    return *it & ((uint64_t{1} << id_bits_) - 1);
}

unsigned class_id_bits_for(std::span<uint64_t const> counts, unsigned remainder_bits) {
    uint64_t n = 0;
    for (uint64_t const c : counts) n += c;
    unsigned const all = qf::class_id_bits(counts.size());
    // A slot's bits at b id bits: its share of a 512-bit block (block_format.hpp's s slots of
    // r + b + 2 bits beside a 16-bit offset).
    auto slot_bits = [&](unsigned b) {
        double const s = std::min(64u, (512u - 16u) / (remainder_bits + b + 2));
        return 512.0 / s;
    };
    unsigned best = all;
    double best_cost = static_cast<double>(n) * slot_bits(all);
    uint64_t inline_count = 0;
    for (unsigned b = 1; b < all; ++b) {
        inline_count = 0;
        uint64_t const escape = (uint64_t{1} << b) - 1;
        for (uint64_t id = 0; id < escape && id < counts.size(); ++id) inline_count += counts[id];
        double const cost =
            static_cast<double>(n) * slot_bits(b) + 64.0 * static_cast<double>(n - inline_count);
        if (cost < best_cost) {
            best = b;
            best_cost = cost;
        }
    }
    return best;
}

std::vector<uint32_t> reference_catalog::members_of_group(std::string const& group) const {
    std::vector<uint32_t> out;
    for (size_t i = 0; i < references.size(); ++i)
        if (!group.empty() && references[i].group == group) out.push_back(static_cast<uint32_t>(i));
    return out;
}

}  // namespace qmer::io
