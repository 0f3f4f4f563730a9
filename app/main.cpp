// qmer's entry point: dispatches to the command line and maps qmer's errors (one base type,
// core/error.hpp) to exit codes (app/exit_code.hpp), printing each error as one line on stderr.

#include <htslib/hts.h>

#include <cstdio>
#include <exception>
#include <new>

#include "app/cli.hpp"
#include "app/exit_code.hpp"
#include "core/error.hpp"

namespace {
int report(char const* what, int code) {
    std::fprintf(stderr, "qmer: error: %s\n", what);
    return code;
}
}  // namespace

int main(int argc, char** argv) {
    using namespace qmer;
    // htslib reports problems on stderr itself; qmer turns them into one error line of its own.
    hts_set_log_level(HTS_LOG_OFF);
    try {
        int const code = app::run_cli(argc, argv);
        if (std::fflush(stdout) != 0)
            return report("writing to stdout failed", app::exit_code::output);
        return code;
    } catch (error const& e) {
        return report(e.what(), app::exit_code::of(e.kind()));
    } catch (std::bad_alloc const&) {
        return report("out of memory", app::exit_code::failure);
    } catch (std::exception const& e) {
        return report(e.what(), app::exit_code::failure);
    }
}
