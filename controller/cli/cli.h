#pragma once
// The gpufed command line: one file per command; this wires them into CLI11.
namespace gpufed::cli {

// Runs the CLI; returns the process exit code (0 ok, 1 failure such as invalid input,
// 2 usage error).
int Main(int argc, char** argv);

}  // namespace gpufed::cli
