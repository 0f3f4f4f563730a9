// qmer's entry point: dispatches to the command line and maps qmer's error types to exit codes,
// printing each error as one line on stderr.

#include <htslib/hts.h>

#include <cstdio>
#include <exception>
#include <new>

#include "app/cli.hpp"
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
        if (std::fflush(stdout) != 0) return report("writing to stdout failed", exit_code::output);
        return code;
    } catch (usage_error const& e) {
        return report(e.what(), exit_code::usage);
    } catch (input_error const& e) {
        return report(e.what(), exit_code::input);
    } catch (index_error const& e) {
        return report(e.what(), exit_code::index);
    } catch (output_error const& e) {
        return report(e.what(), exit_code::output);
    } catch (capacity_error const& e) {
        return report(e.what(), exit_code::capacity);
    } catch (interrupted_error const& e) {
        return report(e.what(), exit_code::interrupted);
    } catch (std::bad_alloc const&) {
        return report("out of memory", exit_code::failure);
    } catch (std::exception const& e) {
        return report(e.what(), exit_code::failure);
    }
}
