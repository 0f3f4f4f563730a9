#pragma once
// Bulk placement into a locally locked quotient filter's table: fingerprints in increasing order,
// each at the first free slot at or after its quotient, into zeroed slots. A quotient filter's
// layout is a function of its set, so the result equals what inserts build. Used by
// locally_locked_filter::append_sorted (qmer index's sorted build) and by a migration's copy
// (migration.hpp).

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/qf/concurrent/locally_locked/table.hpp"

namespace qmer::qf::locally_locked {

// Where the next append goes, and what it follows.
struct sorted_append_state {
    sorted_placement placement;       // the first free slot, the previous quotient
    uint64_t last_fp = ~uint64_t{0};  // the previous fingerprint appended
};

// The sorted layout shared by copy_block() and append_sorted(): places fp, larger than every
// fingerprint placed before with `st`, at the first free slot at or after its quotient in t,
// whose slots start zero; sets the quotient's occupied bit and the element's shifted and
// continuation bits through or_bits(group, bits). False, writing nothing, past the table.
template <typename OrBits>
bool place_sorted(locally_locked::table const& t, uint64_t fp, sorted_append_state& st,
                  OrBits&& or_bits) {
    uint64_t const q = fp >> t.g.remainder_bits;
    if (st.placement.position(q) >= t.total_slots) return false;
    auto const& l = t.lanes;
    st.placement.place(q, fp & t.g.remainder_mask(), [&](size_t slot, uint64_t bits) {
        size_t const g = l.group_of(slot);
        unsigned const shift = static_cast<unsigned>(slot - l.first_slot(g)) * l.slot_bits();
        or_bits(g, bits << shift);
    });
    st.last_fp = fp;
    return true;
}

}  // namespace qmer::qf::locally_locked
