#include "tessera/sim/race.h"

#include <fmt/format.h>

#include "tessera/core/error.h"

namespace tessera::sim {

void RaceDetector::record(Event event, const std::string& buffer, std::uint64_t begin,
                          std::uint64_t end, Kind kind, std::string what) {
  if (end <= begin) return;
  pending_.emplace_back(buffer, Access{event, begin, end, kind, std::move(what)});
}

void RaceDetector::check(const Timeline& timeline) {
  auto kind_name = [](Kind k) { return k == Kind::write ? "writes" : "reads"; };
  for (auto& [buffer, access] : pending_) {
    auto& live = live_[buffer];
    const PipeId pipe = timeline.pipe_of(access.event);
    for (const Access& earlier : live) {
      if (earlier.end <= access.begin || access.end <= earlier.begin) continue;
      if (earlier.kind == Kind::read && access.kind == Kind::read) continue;
      const PipeId other = timeline.pipe_of(earlier.event);
      if (other == pipe) continue;  // one pipe runs in order
      if (timeline.happens_before(earlier.event, access.event) ||
          timeline.happens_before(access.event, earlier.event))
        continue;
      const std::uint64_t lo = std::max(earlier.begin, access.begin);
      const std::uint64_t hi = std::min(earlier.end, access.end);
      // The message reads `access`, which lives in pending_: format it before clearing.
      std::string message = fmt::format(
          "race on {} bytes [{:#x}, {:#x}): pipe {} ({}) {} them and pipe {} ({}) "
          "{} them with no flag, barrier or queue between the two; {}",
          buffer, lo, hi, timeline.pipe_name(other), earlier.what, kind_name(earlier.kind),
          timeline.pipe_name(pipe), access.what, kind_name(access.kind), remedy_);
      pending_.clear();
      throw DeviceFault(timeline.core(), message);
    }
    // A write that covers an earlier access and comes after it supersedes it: later accesses
    // ordered after this write are ordered after that one too.
    if (access.kind == Kind::write)
      std::erase_if(live, [&](const Access& earlier) {
        return earlier.begin >= access.begin && earlier.end <= access.end &&
               (timeline.pipe_of(earlier.event) == pipe ||
                timeline.happens_before(earlier.event, access.event));
      });
    live.push_back(std::move(access));
  }
  pending_.clear();
}

}  // namespace tessera::sim
