// popc (spec 001 §2.8.2): pre-compiles a codelet source into a graph program object (.gp) that
// Graph::addCodelets loads without compiling. Options: -D, -I, -O<n>, -g and any other compiler
// option are passed to the host compiler; --target ipu1|ipu2 picks the worker count's preset.
#include <iostream>
#include <string>
#include <vector>

#include "../api/codelets.h"
#include "../api/state.h"

int main(int argc, char** argv) {
  std::string input, output, flags, target = "ipu2";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << "usage: popc [options] <input file> -o <output file>\n"
                   "  -D<macro>       add a macro definition\n"
                   "  -I<path>        add an include directory\n"
                   "  -g              enable debugging\n"
                   "  -O<n>           optimisation level (0 to 3)\n"
                   "  --target <t>    ipu1, ipu2, a preset name or a JSON preset (default ipu2)\n";
      return 0;
    }
    if (a == "-o" && i + 1 < argc)
      output = argv[++i];
    else if (a == "--target" && i + 1 < argc)
      target = argv[++i];
    else if (!a.empty() && a[0] == '-')
      flags += a + " ";
    else if (input.empty())
      input = a;
    else {
      std::cerr << "popc: more than one input file ('" << input << "', '" << a << "')\n";
      return 2;
    }
  }
  if (input.empty() || output.empty()) {
    std::cerr << "popc: usage: popc [options] <input file> -o <output file> (see --help)\n";
    return 2;
  }
  try {
    auto t = poplar::detail::make_target_state(target, 1);
    poplar::detail::compile_codelets(input, flags, t->workers, output);
  } catch (const std::exception& e) {
    std::cerr << "popc: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
