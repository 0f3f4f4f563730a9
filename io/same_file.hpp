#pragma once
// No output may be the same file as an input or as another output (ARCHITECTURE.md, errors: "a
// user's file is never destroyed"). An output's temporary is renamed onto its final name when the
// command ends, so `qmer query -o reads.fq idx.qmer reads.fq` would replace the reads with the
// verdicts and exit 0.
//
// Two names are the same file when both exist and stat() (which follows symlinks) gives the same
// device and inode: a symlink or a hard link to an input counts. An output that does not exist yet
// cannot be an input; two such outputs are the same file when their folders resolve to the same
// folder (std::filesystem::weakly_canonical) and their names are equal. "-" is the standard stream
// (stdin for an input, stdout for an output), compared by what its descriptor is open on.
//
// Two outputs never share a stream: two outputs named "-", or an output that is the file or pipe
// standard output is open on (`> out.tsv --unmatched out.tsv`, `| ... --unmatched /dev/stdout`),
// would interleave their records or replace each other, so they are refused as well. Character
// devices (/dev/null, a terminal) are written directly, never replaced, and stay allowed for any
// number of outputs: discarding two outputs into /dev/null is a fair request.
//
// No input may be given twice in one role either (the same device and inode, or "-" twice): the
// same file as both mates would pair every read with itself, twice in a panel would count each
// index twice (refuse_repeated_inputs). Inputs of different roles (a FASTA given as the index and
// as the reads) are left to their readers, whose messages say more.
//
// `qmer query`, `qmer index` and `qmer merge` call both before opening anything for writing.

#include <string>
#include <vector>

namespace qmer::io {

// A file a command names: the path as the user gave it, and what it is ("reads", "-o",
// "--summary", "--matched (mate 1)") for the message.
struct named_file {
    std::string path;
    std::string role;
};

// Throws usage_error, one line naming both paths and their roles, when an output is the same file
// as an input or an earlier output, or two outputs write to standard output. Reads and writes
// nothing; inputs that cannot be stat()ed (a missing file) are left to the reader, which names
// them.
void refuse_same_files(std::vector<named_file> const& inputs,
                       std::vector<named_file> const& outputs);

// Throws usage_error, one line naming both, when two of `inputs` (files of one role: the reads
// files, a panel's indexes, the references, the tables) are the same file, or both "-".
void refuse_repeated_inputs(std::vector<named_file> const& inputs);

}  // namespace qmer::io
