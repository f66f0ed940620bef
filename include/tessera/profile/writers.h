// Writers of a run's Profile: JSON (with a reader back, so tools and tests can load it), a text
// summary for people, and a Chrome trace ("traceEvents") that loads in Perfetto or
// chrome://tracing. All output is deterministic: maps are sorted, tracks numbered by name.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "tessera/profile/profile.h"

namespace tessera::profile {

// JSON with "format": "tessera.profile/1" and every field of Profile.
std::string to_json(const Profile& profile, int indent = 2);
// Reads what to_json writes; UserError naming the field on malformed input.
Profile from_json(std::string_view text);

// Total cycles, modeled time, top kernels by cycles (grouped by name), pipe busy %, memory
// high-water marks and bytes moved.
std::string text_summary(const Profile& profile, std::size_t top_kernels = 10);

// Chrome trace event format: one process for the device, one thread per track (kernels first,
// then the trace's tracks sorted by name), complete ("X") events with cycles converted to
// microseconds with the clock. UserError when the clock is not positive.
std::string chrome_trace(const Profile& profile);

// A self-contained HTML page (no scripts, no external files): the text summary's tables, pipe
// busy bars, and a timeline of the trace drawn as inline SVG when the profile has one.
std::string html_report(const Profile& profile, std::size_t top_kernels = 20);

// `text` with &, <, > and " replaced by their HTML entities, for pages built by hand.
std::string escape_html(std::string_view text);

enum class Format { json, text, chrome, html };
// "json", "text" / "summary", "chrome" / "trace", "html"; UserError listing the names otherwise.
Format format_from_name(std::string_view name);
std::string render(const Profile& profile, Format format);

// Writes text to a file / reads a whole file; UserError naming the path on failure.
void write_text_file(const std::string& path, std::string_view text);
std::string read_text_file(const std::string& path);

}  // namespace tessera::profile
