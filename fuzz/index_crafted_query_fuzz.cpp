// Fuzz target: index_damage_fuzz with the loaded filter of a crafted (resealed) index queried too.
// Not part of scripts/fuzz's default run: a crafted table can make contains() wait forever for a
// lock no thread holds, because the filters' from_arrays check geometry but not table contents
// (fuzz/README.md, "Known findings"). Run it with `scripts/fuzz 60 index_crafted_query`.
#define QMER_FUZZ_PROBE_CRAFTED 1
#include "index_damage_fuzz.cpp"
