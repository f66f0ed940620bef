// `tessera arch list` and `tessera arch show`: what presets there are and every figure of one,
// with its unit and its source, so a reader can check each number against where it came from.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "tessera/arch/machine_spec.h"
#include "tessera/core/error.h"

namespace tessera::tools {
namespace {

struct Row {
  std::string field;
  std::string value;
  std::string source;
};

void add_row(std::vector<Row>& rows, const std::string& field, std::string_view unit_field,
             const arch::Figure& f) {
  rows.push_back({field, arch::format_figure(unit_field, f.value), f.source});
}

void print_rows(const std::vector<Row>& rows) {
  std::size_t field_width = 6, value_width = 5;
  for (const Row& r : rows) {
    field_width = std::max(field_width, r.field.size());
    value_width = std::max(value_width, r.value.size());
  }
  fmt::print("{:<{}}  {:>{}}  {}\n", "FIGURE", field_width, "VALUE", value_width, "SOURCE");
  for (const Row& r : rows)
    fmt::print("{:<{}}  {:>{}}  {}\n", r.field, field_width, r.value, value_width, r.source);
}

void list_presets() {
  const std::vector<std::string> names = arch::preset_names();
  if (names.empty())
    throw_user_error(
        "no machine presets found in {}; set TESSERA_ARCH_PATH to the directory "
        "holding the preset JSON files",
        arch::preset_directory());
  std::vector<arch::MachineSpec> specs;
  std::vector<std::string> broken;
  std::size_t name_width = 4;
  for (const auto& n : names) name_width = std::max(name_width, n.size());
  for (const auto& n : names) {
    try {
      const arch::MachineSpec spec = arch::load_machine(n);
      fmt::print("{:<{}}  {:<6}  {:>5} {:<6}  {}\n", n, name_width, spec.target,
                 spec.core_count.as_int(), spec.core_name, spec.description);
    } catch (const UserError&) {
      fmt::print("{:<{}}  INVALID: run `tessera arch show {}` for the problems\n", n, name_width,
                 n);
      broken.push_back(n);
    }
  }
  if (!broken.empty())
    throw_user_error("{} preset{} in {} failed to load: {}", broken.size(),
                     broken.size() == 1 ? "" : "s", arch::preset_directory(),
                     fmt::join(broken, ", "));
}

void show_machine(const std::string& name_or_path) {
  const arch::MachineSpec s = arch::load_machine(name_or_path);
  fmt::print("{}: {}\n", s.name, s.description);
  fmt::print("  file           {}\n", s.origin);
  fmt::print("  target         {}\n", s.target);
  fmt::print("  cores          {} x {}\n", s.core_count.as_int(), s.core_name);
  fmt::print("  global memory  {}\n", s.global_memory);
  fmt::print("  pipes (per {}):\n", s.core_name);
  for (const auto& p : s.pipes) fmt::print("    {:<10} {}\n", p.name, p.description);
  fmt::print("  memories:\n");
  for (const auto& m : s.memories)
    fmt::print("    {:<10} {:<6} {:>10}  {}\n", m.name, m.scope,
               arch::format_figure("capacity_bytes", m.capacity_bytes.value), m.description);
  fmt::print("\n");

  std::vector<Row> rows;
  add_row(rows, "clock_hz", "clock_hz", s.clock_hz);
  add_row(rows, "core_count", "core_count", s.core_count);
  for (const auto& p : s.pipes)
    add_row(rows, fmt::format("pipes.{}.latency_cycles", p.name), "latency_cycles",
            p.latency_cycles);
  for (const auto& m : s.memories) {
    const std::string prefix = "memories." + m.name + ".";
    add_row(rows, prefix + "capacity_bytes", "capacity_bytes", m.capacity_bytes);
    add_row(rows, prefix + "base_address", "base_address", m.base_address);
    add_row(rows, prefix + "alignment_bytes", "alignment_bytes", m.alignment_bytes);
    add_row(rows, prefix + "banks", "banks", m.banks);
    add_row(rows, prefix + "bank_width_bytes", "bank_width_bytes", m.bank_width_bytes);
    add_row(rows, prefix + "bandwidth_bytes_per_cycle", "bandwidth_bytes_per_cycle",
            m.bandwidth_bytes_per_cycle);
    add_row(rows, prefix + "latency_cycles", "latency_cycles", m.latency_cycles);
  }
  add_row(rows, "host_link.bandwidth_bytes_per_second", "bandwidth_bytes_per_second",
          s.host_link.bandwidth_bytes_per_second);
  add_row(rows, "host_link.latency_seconds", "latency_seconds", s.host_link.latency_seconds);
  for (const auto& [key, f] : s.params) add_row(rows, "params." + key, key, f);
  print_rows(rows);
}

}  // namespace

void register_arch_commands(CLI::App& app) {
  CLI::App* arch = app.add_subcommand("arch", "Machine presets: list them, show one's figures");
  arch->require_subcommand(1);

  arch->add_subcommand("list", "One line per preset: name, target, cores, description")
      ->callback(list_presets);

  CLI::App* show = arch->add_subcommand(
      "show", "Every figure of a preset or machine JSON file, with its unit and source");
  auto target = std::make_shared<std::string>();
  show->add_option("machine", *target,
                   "Preset name (see `tessera arch list`) or path to a JSON file")
      ->required();
  show->callback([target] { show_machine(*target); });
}

}  // namespace tessera::tools
