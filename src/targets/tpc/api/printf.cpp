// printf of TPC kernels (spec 000 §2.7.3): formats one value into the instance's buffer.
#include "tessera/targets/tpc/api/printf.h"

#include <cstdio>
#include <string>

#include "tessera/core/error.h"
#include "tessera/targets/tpc/api/context.h"

namespace tessera::tpc::detail {
namespace {

[[noreturn]] void format_error(const InstanceContext& c, const char* format,
                               const std::string& why) {
  throw_user_error("tpc{} kernel {}: printf(\"{}\"): {}", c.core, c.kernel_name, format, why);
}

std::string format_one(const InstanceContext& c, const char* format, const PrintfArg& arg) {
  std::string out;
  bool used = false;
  for (const char* p = format; *p != '\0'; ++p) {
    if (*p != '%') {
      out.push_back(*p);
      continue;
    }
    if (p[1] == '%') {
      out.push_back('%');
      ++p;
      continue;
    }
    // %[flags][width][.precision][length]conversion
    const char* start = p++;
    while (*p != '\0' && std::string_view("-+ #0").find(*p) != std::string_view::npos) ++p;
    while (*p >= '0' && *p <= '9') ++p;
    if (*p == '.') {
      ++p;
      while (*p >= '0' && *p <= '9') ++p;
    }
    std::string spec(start, p);  // without length modifier and conversion
    int length = 0;              // 0: int, 1: h, 2: hh, 3: bf
    if (p[0] == 'h' && p[1] == 'h') {
      length = 2;
      p += 2;
    } else if (p[0] == 'h') {
      length = 1;
      ++p;
    } else if (p[0] == 'b' && p[1] == 'f') {
      length = 3;
      ++p;  // now on 'f'
    }
    const char conv = *p;
    if (conv == '\0') format_error(c, format, "the format ends inside a conversion");
    if (used) format_error(c, format, "TPC printf prints at most one value per call");
    if (arg.kind == PrintfKind::none)
      format_error(c, format, "the format has a conversion but no value was passed");
    used = true;
    char buf[512];
    int n = 0;
    switch (conv) {
      case 'd':
      case 'i': {
        if (arg.kind == PrintfKind::f64 || arg.kind == PrintfKind::bf16 ||
            arg.kind == PrintfKind::str)
          format_error(c, format, "%d needs an integer value");
        std::int64_t v = arg.kind == PrintfKind::i64 ? arg.i : static_cast<std::int64_t>(arg.u);
        if (length == 2)
          v = static_cast<std::int8_t>(v);
        else if (length == 1)
          v = static_cast<std::int16_t>(v);
        else
          v = static_cast<std::int32_t>(v);
        n = std::snprintf(buf, sizeof buf, (spec + "lld").c_str(), static_cast<long long>(v));
        break;
      }
      case 'u':
      case 'x':
      case 'X':
      case 'o':
      case 'c': {
        if (arg.kind == PrintfKind::f64 || arg.kind == PrintfKind::bf16 ||
            arg.kind == PrintfKind::str)
          format_error(c, format, std::string("%") + conv + " needs an integer value");
        std::uint64_t v = arg.u;
        if (length == 2)
          v = static_cast<std::uint8_t>(v);
        else if (length == 1)
          v = static_cast<std::uint16_t>(v);
        else
          v = static_cast<std::uint32_t>(v);
        if (conv == 'c')
          n = std::snprintf(buf, sizeof buf, (spec + "c").c_str(), static_cast<int>(v));
        else
          n = std::snprintf(buf, sizeof buf, (spec + "ll" + conv).c_str(),
                            static_cast<unsigned long long>(v));
        break;
      }
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
      case 'a':
      case 'A': {
        double v = 0;
        if (arg.kind == PrintfKind::f64 || arg.kind == PrintfKind::bf16)
          v = arg.f;
        else
          format_error(c, format, std::string("%") + conv + " needs a floating-point value");
        if (length == 3 && arg.kind != PrintfKind::bf16)
          v = static_cast<float>(tessera::bf16(static_cast<float>(v)));
        n = std::snprintf(buf, sizeof buf, (spec + conv).c_str(), v);
        break;
      }
      case 's': {
        if (arg.kind != PrintfKind::str) format_error(c, format, "%s needs a string");
        n = std::snprintf(buf, sizeof buf, (spec + "s").c_str(), arg.s ? arg.s : "(null)");
        break;
      }
      default:
        format_error(c, format, std::string("unsupported conversion %") + conv);
    }
    if (n > 0) out.append(buf, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
  }
  if (!used && arg.kind != PrintfKind::none)
    format_error(c, format, "a value was passed but the format has no conversion for it");
  return out;
}

}  // namespace

void printf_impl(const char* format, const PrintfArg& arg) {
  InstanceContext& c = instance("printf");
  // The kernel's use of printf is what the hardware's loader sees in the binary; the executor
  // checks the tensor limit for printf kernels after the instance (spec 000 §2.4.2).
  c.printf_called = true;
  c.clock.issue(kSpu, 0);
  global_write(c, 0);  // the message goes out through the printf tensor
  if (c.printf_out != nullptr) c.printf_out->append(format_one(c, format, arg));
}

}  // namespace tessera::tpc::detail
