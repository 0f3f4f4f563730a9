#pragma once
// The command line: parses argv with CLI11 (app/cli.cpp is the only file that includes it) and
// dispatches to one subcommand's worker. Errors propagate as qmer's exceptions to main().

namespace qmer::app {

// Returns the exit code for --help/--version and parse errors; throws for errors inside commands.
int run_cli(int argc, char** argv);

}  // namespace qmer::app
