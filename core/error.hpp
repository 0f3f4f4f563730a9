#pragma once
// qmer's errors: one base type, qmer::error, that carries what kind of problem it reports, and one
// named type per kind. Each is thrown where the problem is found, with a message that names the
// file (and record) when there is one, and caught once in app/main.cpp, which prints it as one line
// and maps its kind to an exit code (app/exit_code.hpp: core knows no exit codes).
//
// Every filter's own geometry checks (core/qf/, core/bloom/, core/cuckoo/) throw
// std::invalid_argument: a table that cannot be built is a caller's error, which the app reports
// as a bad parameter (app/index/run.cpp) or a damaged index (app/filters/persistence.hpp). A
// user's parameters are checked once, before anything is allocated (core/bounds.hpp), and throw
// usage_error.

#include <stdexcept>
#include <string>

namespace qmer {

enum class error_kind {
    usage,        // a parameter the user gave cannot be used (k out of range, bad --fpr)
    input,        // an input file cannot be read or holds a malformed record
    index,        // an index file is damaged, foreign, or from an incompatible version
    output,       // writing an output failed (missing folder, full disk, closed pipe)
    capacity,     // a filter of fixed capacity cannot take another element
    interrupted,  // a SIGINT/SIGTERM arrived; work stopped and temporary files were removed
};

struct error : std::runtime_error {
    error(error_kind kind, std::string const& what) : std::runtime_error(what), kind_(kind) {}
    error(error_kind kind, char const* what) : std::runtime_error(what), kind_(kind) {}
    error_kind kind() const noexcept { return kind_; }

  private:
    error_kind kind_;
};

// One type per kind, so a caller can catch the kind it handles.
template <error_kind Kind>
struct error_of : error {
    explicit error_of(std::string const& what) : error(Kind, what) {}
    explicit error_of(char const* what) : error(Kind, what) {}
};

using usage_error = error_of<error_kind::usage>;
using input_error = error_of<error_kind::input>;
using index_error = error_of<error_kind::index>;
using output_error = error_of<error_kind::output>;
using capacity_error = error_of<error_kind::capacity>;
using interrupted_error = error_of<error_kind::interrupted>;

}  // namespace qmer
