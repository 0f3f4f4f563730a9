#pragma once
// Tests of what `cmake --install` and `cpack` deliver: a fresh folder per test (cli_test), a
// scratch prefix installed from this build, and shell commands whose output is captured.

#include <string>
#include <string_view>

#include "cli/cli_fixture.hpp"

namespace qmer::test {

struct command_result {
    int exit_code = -1;
    std::string out;  // stdout and stderr together
};

class install_test : public cli_test {
  protected:
    // Runs a bash command line in the test folder, capturing stdout and stderr.
    command_result run(std::string const& command_line) {
        write_file("command.sh", command_line + "\n");
        auto const status = shell("bash command.sh > command.out 2>&1");
        return {status.exit_code, slurp(dir() / "command.out")};
    }

    // Single-quoted for the shell (the paths here hold no quote). Built by appending: GCC 12
    // warns falsely (-Wrestrict) on "literal" + std::string chains at -O3.
    static std::string quoted(std::string_view s) {
        std::string q(1, '\'');
        q += s;
        q += '\'';
        return q;
    }

    // Installs this build under `prefix` (relative to the test folder); false, with the log
    // recorded as a test failure, when cmake --install fails.
    bool install(std::string const& prefix) {
        auto const r = run(quoted(QMER_CMAKE) + " --install " + quoted(QMER_BUILD_DIR) +
                           " --prefix " + quoted((dir() / prefix).string()));
        EXPECT_EQ(r.exit_code, 0) << r.out;
        return r.exit_code == 0;
    }

    // Configures, builds and runs examples/consumer against the qmer package under `prefix`
    // (relative to the test folder), returning the run's output, or the failing step's log.
    command_result build_and_run_consumer(std::string const& prefix, std::string const& args) {
        std::string const source = std::string(QMER_SOURCE_DIR) + "/examples/consumer";
        return run(quoted(QMER_CMAKE) + " -S " + quoted(source) +
                   " -B consumer -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=" +
                   quoted((dir() / prefix).string()) + " > consumer.log 2>&1 && " +
                   quoted(QMER_CMAKE) +
                   " --build consumer >> consumer.log 2>&1 || { cat consumer.log; exit 1; }\n" +
                   "consumer/qmer_consumer " + args);
    }
};

}  // namespace qmer::test
