#pragma once
// No output may be the same file as an input or as another output (DESIGN.md, errors: "a user's
// file is never destroyed"). An output's temporary is renamed onto its final name when the command
// ends, so `qmer query -o reads.fq idx.qmer reads.fq` would replace the reads with the verdicts and
// exit 0.
//
// Two names are the same file when both exist and stat() (which follows symlinks) gives the same
// device and inode: a symlink or a hard link to an input counts. An output that does not exist yet
// cannot be an input; two such outputs are the same file when their folders resolve to the same
// folder (std::filesystem::weakly_canonical) and their names are equal. "-" is the standard stream
// (stdin for an input, stdout for an output), compared by what its descriptor is open on (stdout
// is written in place, so only against the inputs: `-o - --summary -` is allowed). Only
// regular files are compared: devices (/dev/null, /dev/stdout on a terminal), pipes and sockets
// are written directly and never replaced, so they stay allowed.
//
// Both `qmer query` and `qmer index` call refuse_same_files() before opening anything for writing.

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
// as an input or an earlier output. Reads and writes nothing; inputs that cannot be stat()ed (a
// missing file) are left to the reader, which names them.
void refuse_same_files(std::vector<named_file> const& inputs,
                       std::vector<named_file> const& outputs);

}  // namespace qmer::io
