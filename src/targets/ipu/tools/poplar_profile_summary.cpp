// poplar_profile_summary (spec 001 §8.2.2): prints the §8.2.3 profile summary from the graph and
// execution profiles an Engine saved (autoReport, or serializeToJSON of getGraphProfile /
// getExecutionProfile). The report is the one Engine::printProfileSummary prints.
#include <fstream>
#include <iostream>
#include <string>

#include <poplar/Engine.hpp>
#include <poplar/exceptions.hpp>

#include "../api/profile_tree.h"

namespace {

const char* kUsage =
    "usage: poplar_profile_summary [--graph-profile <file>] [--execution-profile <file>] "
    "[options]\n"
    "  --graph-profile <file>        graph profile (graph.json)\n"
    "  --execution-profile <file>    execution profile (execution.json)\n"
    "  --show-execution-steps        show the execution steps\n"
    "  --show-optimizations          accepted; Tessera's compiler reports no optimisations\n"
    "  --show-per-ipu-memory-usage   show the largest tiles' memory by category\n"
    "  --show-var-storage            accepted; variable liveness is not modeled\n"
    "  --colours                     colour the output even when it is not a terminal\n";

poplar::ProfileValue load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw poplar::file_load_error("cannot open " + path + "; check the path of the profile");
  return poplar::detail::read_profile(in, path);
}

}  // namespace

int main(int argc, char** argv) {
  std::string graph, exec;
  poplar::OptionFlags opts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string& into) {
      if (i + 1 >= argc) {
        std::cerr << "poplar_profile_summary: " << a << " needs a file\n" << kUsage;
        std::exit(2);
      }
      into = argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--graph-profile") {
      value(graph);
    } else if (a == "--execution-profile") {
      value(exec);
    } else if (a == "--show-execution-steps") {
      opts.set("showExecutionSteps", "true");
    } else if (a == "--show-per-ipu-memory-usage") {
      opts.set("showPerTileMemory", "true");
    } else if (a == "--colours") {
      opts.set("colours", "true");
    } else if (a == "--show-optimizations" || a == "--show-var-storage") {
      // Accepted for compatibility; nothing to show.
    } else {
      std::cerr << "poplar_profile_summary: unknown argument '" << a << "'\n" << kUsage;
      return 2;
    }
  }
  if (graph.empty() && exec.empty()) {
    std::cerr << "poplar_profile_summary: give --graph-profile and/or --execution-profile\n"
              << kUsage;
    return 2;
  }
  try {
    poplar::ProfileValue g, x;
    if (!graph.empty()) g = load(graph);
    if (!exec.empty()) x = load(exec);
    if (!graph.empty() && !exec.empty())
      poplar::printProfileSummary(std::cout, g, x, opts);
    else if (!graph.empty())
      poplar::printGraphSummary(std::cout, g, opts);
    else
      poplar::printExecutionSummary(std::cout, x, opts);
  } catch (const std::exception& e) {
    std::cerr << "poplar_profile_summary: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
