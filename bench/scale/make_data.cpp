// make_data: synthetic references and reads for bench/scale (see README.md there).
//
// Standalone (no project headers): g++ -O2 -std=c++20 -o make_data make_data.cpp
//
// usage: make_data --size BP [--seed S] [--repetitive] [--ref OUT.fa]
//                  [--reads R] [--read-seed S] [--read-length L] [--error E]
//                  [--present OUT.fq] [--one OUT.fq]
//                  [--absent OUT.fq] [--absent-seed S]
//                  [--record-max BP] [--units N] [--unit-min BP] [--unit-max BP]
//                  [--repeat-fraction F] [--div-min D] [--div-max D]
//
//   --size BP            reference length (bases); the reference is a pure function of
//                        (size, seed, --repetitive and the repeat options), whatever else is asked
//   --ref OUT.fa         write it as FASTA: records of at most --record-max bases (default
//                        100,000,000; equal lengths), one sequence line per record
//   --repetitive         random sequence in which mutated copies of --units (20) repeat units of
//                        --unit-min..--unit-max (300..6,000) bp, log-uniform lengths, either
//                        strand, each copy with its own substitution rate in --div-min..--div-max
//                        (0.01..0.03), make up --repeat-fraction (0.5) of the bases
//   --present OUT.fq     R reads (--reads, default 500,000) of --read-length (150) bp, each from a
//                        uniform position of a uniform base of the reference (reads never span two
//                        records), either strand, substitutions at rate --error (default 0)
//   --one OUT.fq         the first of those reads alone
//   --absent OUT.fq      R reads of uniform random sequence from --absent-seed (not the reference)
//
// Bases A/C/G/T uniform, qualities 'I'. Every output is written to OUT.tmp and renamed, so a
// killed run leaves no partial file under the final name. The reference is held 2-bit packed
// (size / 4 bytes). A summary goes to stderr.
#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct splitmix64 {
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
};

__extension__ typedef unsigned __int128 u128;

// xoshiro256** (Blackman and Vigna), seeded through splitmix64.
struct rng {
    std::uint64_t s[4];
    explicit rng(std::uint64_t seed) {
        splitmix64 sm{seed};
        for (auto& w : s) w = sm.next();
    }
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t next() {
        const std::uint64_t result = rotl(s[1] * 5, 7) * 9;
        const std::uint64_t t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return result;
    }
    // [0, n): multiply-shift (bias below 2^-32 for the n used here)
    std::uint64_t below(std::uint64_t n) {
        return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64);
    }
    double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

constexpr char kBase[4] = {'A', 'C', 'G', 'T'};

// byte of 4 packed bases (base i in bits 2i..2i+1) -> 4 characters
struct unpack_table {
    std::array<std::array<char, 4>, 256> t{};
    unpack_table() {
        for (int b = 0; b < 256; ++b)
            for (int i = 0; i < 4; ++i) t[b][i] = kBase[(b >> (2 * i)) & 3];
    }
};
const unpack_table kUnpack;

struct packed_seq {
    std::vector<std::uint8_t> bytes;
    std::uint64_t n = 0;
    explicit packed_seq(std::uint64_t len) : bytes((len + 3) / 4), n(len) {}
    unsigned get(std::uint64_t i) const { return (bytes[i >> 2] >> (2 * (i & 3))) & 3U; }
    void set(std::uint64_t i, unsigned b) {
        auto& byte = bytes[i >> 2];
        const int sh = static_cast<int>(2 * (i & 3));
        byte = static_cast<std::uint8_t>((byte & ~(3U << sh)) | (b << sh));
    }
    // characters of [from, from + len) appended to out
    void unpack(std::uint64_t from, std::uint64_t len, char* out) const {
        std::uint64_t i = from;
        const std::uint64_t end = from + len;
        while (i < end && (i & 3)) *out++ = kBase[get(i++)];
        while (i + 4 <= end) {
            std::memcpy(out, kUnpack.t[bytes[i >> 2]].data(), 4);
            out += 4;
            i += 4;
        }
        while (i < end) *out++ = kBase[get(i++)];
    }
};

void fill_random(std::vector<std::uint8_t>& bytes, rng& r) {
    std::size_t i = 0;
    for (; i + 8 <= bytes.size(); i += 8) {
        const std::uint64_t w = r.next();
        std::memcpy(bytes.data() + i, &w, 8);
    }
    if (i < bytes.size()) {
        const std::uint64_t w = r.next();
        std::memcpy(bytes.data() + i, &w, bytes.size() - i);
    }
}

// Buffered output to PATH.tmp, renamed to PATH by close().
class out_file {
  public:
    explicit out_file(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp") {
        f_ = std::fopen(tmp_.c_str(), "wb");
        if (!f_) throw std::runtime_error("cannot create '" + tmp_ + "': " + std::strerror(errno));
        buf_.reserve(kBuf);
    }
    out_file(const out_file&) = delete;
    out_file& operator=(const out_file&) = delete;
    ~out_file() {
        if (f_) {
            std::fclose(f_);
            std::remove(tmp_.c_str());
        }
    }
    char* reserve(std::size_t n) {  // room for n more characters; commit() them after writing
        if (buf_.size() + n > kBuf) flush();
        if (n > buf_.capacity() - buf_.size()) buf_.reserve(buf_.size() + n);
        const std::size_t old = buf_.size();
        buf_.resize(old + n);
        return buf_.data() + old;
    }
    void put(std::string_view s) { std::memcpy(reserve(s.size()), s.data(), s.size()); }
    void close() {
        flush();
        const bool bad = std::ferror(f_) != 0;
        if (std::fclose(f_) != 0 || bad) {
            f_ = nullptr;
            std::remove(tmp_.c_str());
            throw std::runtime_error("write failed: '" + tmp_ + "'");
        }
        f_ = nullptr;
        if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
            throw std::runtime_error("cannot rename '" + tmp_ + "': " + std::strerror(errno));
        std::fprintf(stderr, "make_data: wrote %s (%.1f MB)\n", path_.c_str(), written_ / 1e6);
    }

  private:
    static constexpr std::size_t kBuf = std::size_t{16} << 20;
    void flush() {
        if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
            throw std::runtime_error("write failed: '" + tmp_ + "': " + std::strerror(errno));
        written_ += static_cast<double>(buf_.size());
        buf_.clear();
    }
    std::string path_, tmp_;
    std::FILE* f_ = nullptr;
    std::vector<char> buf_;
    double written_ = 0;
};

struct options {
    std::uint64_t size = 0;
    std::uint64_t seed = 1;
    bool repetitive = false;
    std::string ref, present, one, absent;
    std::uint64_t reads = 500000;
    std::uint64_t read_seed = 0;  // 0: derived from seed
    std::uint64_t absent_seed = 0x5eed0ab5e47ULL;
    std::uint64_t read_length = 150;
    double error = 0;
    std::uint64_t record_max = 100000000;
    std::uint64_t units = 20, unit_min = 300, unit_max = 6000;
    double repeat_fraction = 0.5, div_min = 0.01, div_max = 0.03;
};

std::uint64_t parse_u64(std::string_view name, std::string_view v) {
    std::uint64_t x = 0;
    // accept plain digits, optionally with a k/M/G suffix (decimal)
    std::uint64_t mult = 1;
    if (!v.empty()) {
        switch (v.back()) {
            case 'k':
            case 'K':
                mult = 1000;
                v.remove_suffix(1);
                break;
            case 'm':
            case 'M':
                mult = 1000000;
                v.remove_suffix(1);
                break;
            case 'g':
            case 'G':
                mult = 1000000000;
                v.remove_suffix(1);
                break;
            default:
                break;
        }
    }
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc{} || p != v.data() + v.size() || v.empty())
        throw std::runtime_error("--" + std::string(name) + ": not a non-negative integer: '" +
                                 std::string(v) + "'");
    return x * mult;
}
double parse_double(std::string_view name, const char* v) {
    char* end = nullptr;
    const double x = std::strtod(v, &end);
    if (end == v || *end != '\0' || !(x >= 0))
        throw std::runtime_error("--" + std::string(name) + ": not a non-negative number: '" + v +
                                 "'");
    return x;
}

options parse(int argc, char** argv) {
    options o;
    bool have_size = false;
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        if (a == "-h" || a == "--help") {
            std::fputs(
                "usage: make_data --size BP [--seed S] [--repetitive] [--ref OUT.fa] [--reads R] "
                "[--read-seed S]\n"
                "                 [--read-length L] [--error E] [--present OUT.fq] [--one OUT.fq] "
                "[--absent OUT.fq]\n"
                "                 [--absent-seed S] [--record-max BP] [--units N] [--unit-min BP] "
                "[--unit-max BP]\n"
                "                 [--repeat-fraction F] [--div-min D] [--div-max D]   (see the top "
                "of make_data.cpp)\n",
                stdout);
            std::exit(0);
        }
        if (a == "--repetitive") {
            o.repetitive = true;
            continue;
        }
        if (!a.starts_with("--") || i + 1 >= argc)
            throw std::runtime_error("unknown or incomplete argument '" + std::string(a) + "'");
        const std::string_view name = a.substr(2);
        const char* v = argv[++i];
        if (name == "size") {
            o.size = parse_u64(name, v);
            have_size = true;
        } else if (name == "seed")
            o.seed = parse_u64(name, v);
        else if (name == "ref")
            o.ref = v;
        else if (name == "present")
            o.present = v;
        else if (name == "one")
            o.one = v;
        else if (name == "absent")
            o.absent = v;
        else if (name == "reads")
            o.reads = parse_u64(name, v);
        else if (name == "read-seed")
            o.read_seed = parse_u64(name, v);
        else if (name == "absent-seed")
            o.absent_seed = parse_u64(name, v);
        else if (name == "read-length")
            o.read_length = parse_u64(name, v);
        else if (name == "error")
            o.error = parse_double(name, v);
        else if (name == "record-max")
            o.record_max = parse_u64(name, v);
        else if (name == "units")
            o.units = parse_u64(name, v);
        else if (name == "unit-min")
            o.unit_min = parse_u64(name, v);
        else if (name == "unit-max")
            o.unit_max = parse_u64(name, v);
        else if (name == "repeat-fraction")
            o.repeat_fraction = parse_double(name, v);
        else if (name == "div-min")
            o.div_min = parse_double(name, v);
        else if (name == "div-max")
            o.div_max = parse_double(name, v);
        else
            throw std::runtime_error("unknown option '" + std::string(a) + "'");
    }
    const bool need_ref = !o.ref.empty() || !o.present.empty() || !o.one.empty();
    if (need_ref && !have_size)
        throw std::runtime_error("--size is required for --ref, --present and --one");
    if (need_ref && o.size < o.read_length)
        throw std::runtime_error("--size must be at least --read-length");
    if (o.read_length == 0) throw std::runtime_error("--read-length must be positive");
    if (o.error > 1) throw std::runtime_error("--error must be in [0, 1]");
    if (o.record_max < o.read_length)
        throw std::runtime_error("--record-max must be at least --read-length");
    if (o.repetitive) {
        if (o.units == 0 || o.unit_min == 0 || o.unit_min > o.unit_max)
            throw std::runtime_error("bad repeat units");
        if (!(o.repeat_fraction > 0 && o.repeat_fraction < 1))
            throw std::runtime_error("--repeat-fraction must be in (0, 1)");
        if (o.div_min > o.div_max || o.div_max >= 1)
            throw std::runtime_error("bad --div-min/--div-max");
    }
    if (!need_ref && o.absent.empty())
        throw std::runtime_error("nothing to write (--ref, --present, --one or --absent)");
    return o;
}

// Overwrite about repeat_fraction of seq with mutated copies of a few random units; returns the
// number of bases covered by copies.
std::uint64_t insert_repeats(packed_seq& seq, const options& o, rng& r) {
    std::vector<std::vector<std::uint8_t>> units(o.units);
    const double lmin = std::log(static_cast<double>(o.unit_min)),
                 lmax = std::log(static_cast<double>(o.unit_max));
    for (auto& u : units) {
        const auto len =
            static_cast<std::uint64_t>(std::llround(std::exp(lmin + (lmax - lmin) * r.unit())));
        u.resize(std::clamp(len, o.unit_min, o.unit_max));
        for (auto& b : u) b = static_cast<std::uint8_t>(r.below(4));
    }
    // copy, gap, copy, gap, ...: the gap after a copy of c bases is uniform in [0, 2c(1-f)/f], so
    // copies make up f of the bases on average. Gaps keep the random bases already there.
    const double gap_scale = 2.0 * (1.0 - o.repeat_fraction) / o.repeat_fraction;
    std::uint64_t pos = r.below(o.unit_max), covered = 0;
    while (pos < seq.n) {
        const auto& u = units[r.below(units.size())];
        const bool reverse = (r.next() & 1) != 0;
        const double div = o.div_min + (o.div_max - o.div_min) * r.unit();
        const std::uint64_t len = std::min<std::uint64_t>(u.size(), seq.n - pos);
        // next substituted offset: geometric gaps
        const double log1m = std::log1p(-div);
        auto next_sub = [&](std::uint64_t from) -> std::uint64_t {
            if (div <= 0) return UINT64_MAX;
            const double g = std::floor(std::log(1.0 - r.unit()) / log1m);
            return g >= 1e18 ? UINT64_MAX : from + static_cast<std::uint64_t>(g);
        };
        std::uint64_t sub = next_sub(0);
        for (std::uint64_t j = 0; j < len; ++j) {
            unsigned b = reverse ? 3U - u[u.size() - 1 - j] : u[j];
            if (j == sub) {
                b = (b + 1 + static_cast<unsigned>(r.below(3))) & 3U;
                sub = next_sub(j + 1);
            }
            seq.set(pos + j, b);
        }
        covered += len;
        pos +=
            len + static_cast<std::uint64_t>(static_cast<double>(u.size()) * gap_scale * r.unit());
    }
    return covered;
}

std::string fmt_u(std::uint64_t x) {
    return std::to_string(x);
}

}  // namespace

int main(int argc, char** argv) try {
    const options o = parse(argc, argv);
    const auto t0 = std::chrono::steady_clock::now();
    auto secs = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    const std::uint64_t L = o.read_length;
    const std::string qual(L, 'I');

    if (!o.ref.empty() || !o.present.empty() || !o.one.empty()) {
        packed_seq seq(o.size);
        rng r(o.seed);
        fill_random(seq.bytes, r);
        std::uint64_t repeat_bases = 0;
        if (o.repetitive) {
            rng rr(o.seed ^ 0x7e9e47ULL);
            repeat_bases = insert_repeats(seq, o, rr);
        }
        // records: ceil(size / record_max), equal lengths (the first size % n one base longer)
        const std::uint64_t nrec = (o.size + o.record_max - 1) / o.record_max;
        std::vector<std::uint64_t> start(nrec + 1);
        for (std::uint64_t i = 0; i < nrec; ++i)
            start[i + 1] = start[i] + o.size / nrec + (i < o.size % nrec ? 1 : 0);
        std::fprintf(
            stderr,
            "make_data: reference %llu bp (%s, seed %llu), %llu records, repeat copies %.1f%% of "
            "bases; %.1f s\n",
            static_cast<unsigned long long>(o.size), o.repetitive ? "repetitive" : "random",
            static_cast<unsigned long long>(o.seed), static_cast<unsigned long long>(nrec),
            100.0 * static_cast<double>(repeat_bases) / static_cast<double>(o.size), secs());

        if (!o.ref.empty()) {
            out_file f(o.ref);
            for (std::uint64_t i = 0; i < nrec; ++i) {
                f.put(">" + std::string(o.repetitive ? "rep" : "rnd") + fmt_u(i + 1) +
                      " synthetic seed=" + fmt_u(o.seed) +
                      " len=" + fmt_u(start[i + 1] - start[i]) + "\n");
                constexpr std::uint64_t kChunk = std::uint64_t{1} << 22;
                for (std::uint64_t p = start[i]; p < start[i + 1]; p += kChunk) {
                    const std::uint64_t n = std::min(kChunk, start[i + 1] - p);
                    seq.unpack(p, n, f.reserve(n));
                }
                f.put("\n");
            }
            f.close();
        }
        if (!o.present.empty() || !o.one.empty()) {
            rng rr(o.read_seed != 0 ? o.read_seed : o.seed * 0x9e3779b97f4a7c15ULL + 0x2ead5);
            std::unique_ptr<out_file> fp, f1;
            if (!o.present.empty()) fp = std::make_unique<out_file>(o.present);
            if (!o.one.empty()) f1 = std::make_unique<out_file>(o.one);
            const std::uint64_t count = fp ? o.reads : 1;
            std::string read(L, 'N');
            std::uint64_t subs = 0;
            for (std::uint64_t k = 0; k < count; ++k) {
                std::uint64_t p, rec;
                do {  // a uniform base of the reference; again if the read would leave its record
                    p = rr.below(o.size);
                    rec = static_cast<std::uint64_t>(
                              std::upper_bound(start.begin(), start.end(), p) - start.begin()) -
                          1;
                } while (p + L > start[rec + 1]);
                const bool reverse = (rr.next() & 1) != 0;
                for (std::uint64_t j = 0; j < L; ++j) {
                    unsigned b = reverse ? 3U - seq.get(p + L - 1 - j) : seq.get(p + j);
                    if (o.error > 0 && rr.unit() < o.error) {
                        b = (b + 1 + static_cast<unsigned>(rr.below(3))) & 3U;
                        ++subs;
                    }
                    read[j] = kBase[b];
                }
                const std::string rec_text = "@p" + fmt_u(k + 1) + " " +
                                             (o.repetitive ? "rep" : "rnd") + fmt_u(rec + 1) + ":" +
                                             fmt_u(p - start[rec] + 1) + (reverse ? "-" : "+") +
                                             "\n" + read + "\n+\n" + qual + "\n";
                if (fp) fp->put(rec_text);
                if (f1 && k == 0) f1->put(rec_text);
            }
            if (fp) fp->close();
            if (f1) f1->close();
            std::fprintf(stderr,
                         "make_data: %llu present reads of %llu bp, error rate %g (%llu "
                         "substitutions); %.1f s\n",
                         static_cast<unsigned long long>(count), static_cast<unsigned long long>(L),
                         o.error, static_cast<unsigned long long>(subs), secs());
        }
    }
    if (!o.absent.empty()) {
        rng r(o.absent_seed);
        out_file f(o.absent);
        std::string read(L, 'N');
        for (std::uint64_t k = 0; k < o.reads; ++k) {
            for (std::uint64_t j = 0; j < L; j += 32) {
                std::uint64_t w = r.next();
                for (std::uint64_t i = j; i < std::min(L, j + 32); ++i, w >>= 2)
                    read[i] = kBase[w & 3];
            }
            f.put("@a" + fmt_u(k + 1) + " random seed=" + fmt_u(o.absent_seed) + "\n" + read +
                  "\n+\n" + qual + "\n");
        }
        f.close();
        std::fprintf(stderr, "make_data: %llu absent reads of %llu bp (seed %llu); %.1f s\n",
                     static_cast<unsigned long long>(o.reads), static_cast<unsigned long long>(L),
                     static_cast<unsigned long long>(o.absent_seed), secs());
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "make_data: error: %s\n", e.what());
    return 1;
}
