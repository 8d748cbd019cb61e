#include "cli/commands.hpp"
#include "util/log.hpp"

int main(int argc, char** argv) {
  redlock::protect_standard_streams();
  return redlock::cli::main(argc, argv);
}
