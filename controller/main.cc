// gpufed: wiring only; every command lives in controller/cli.
#include "controller/cli/cli.h"

int main(int argc, char** argv) { return gpufed::cli::Main(argc, argv); }
