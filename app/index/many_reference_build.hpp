#pragma once
// The build of a many-reference index (`qmer index -r NAME=FILE ...`, `--references SHEET`): one
// default-kind index whose level carries, beside each fingerprint, the id of the class of
// references holding it (core/qf/stored/classes.hpp, rank_select_table's value bits), and ends
// with the reference catalog (io/reference_catalog.hpp). Phases:
//   1. read: every reference's k-mers hashed (the plain scheme) into lists of its own, each sorted
//      and made distinct;
//   2. merge: the lists merged a range of the hash at a time (threads), each distinct hash given
//      the set of references holding it, interned as a class;
//   3. fingerprints: the level sized for the distinct hashes; hashes whose fingerprints collide
//      get the union of their classes, so no reference loses a k-mer;
//   4. classes numbered by frequency (the most frequent smallest), and the level written in the
//      rank-select layout from fingerprint << id bits | id.
// Everything is held in memory (8 bytes per k-mer position while reading, 12 per distinct k-mer
// after): a build beyond --max-memory is refused, not spilled.

#include <vector>

#include "app/index/index_build.hpp"
#include "app/index/reference_sheet.hpp"

namespace qmer::app {

// Builds b.options.output from `refs` (their paths are b.options.references, in order).
void build_many_references(index_build& b, std::vector<named_reference> const& refs);

}  // namespace qmer::app
