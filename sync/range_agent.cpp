// SPDX-License-Identifier: MIT
#include "sync/range_agent.hpp"

#include <charconv>

#include "sync/remote_listing.hpp"

namespace gpurent {
namespace {

constexpr std::string_view k_report = "gpurent-range";

}  // namespace

std::string_view pick_hash_lines()
{
  return "if openssl dgst -sha256 -r </dev/null >/dev/null 2>&1; then H='openssl dgst -sha256 -r'\n"
         "elif sha256sum </dev/null >/dev/null 2>&1; then H=sha256sum\n"
         "elif shasum -a 256 </dev/null >/dev/null 2>&1; then H='shasum -a 256'\n"
         "else H=; fi\n";
}

std::string range_read_command(std::string_view path, std::uint64_t offset, std::uint64_t length)
{
  const std::string read = "dd if=\"$f\" bs=1048576 iflag=skip_bytes,count_bytes skip=" + std::to_string(offset) +
                           " count=" + std::to_string(length) + " status=none 2>/dev/null";
  return "f=" + remote_shell_path(path) +
         "\n"
         "if [ ! -f \"$f\" ] || [ ! -r \"$f\" ]; then printf 'gpurent-range\\0missing\\0\\0' >&2; exit 3; fi\n" +
         std::string(pick_hash_lines()) +
         "h=\n"
         "if [ -n \"$H\" ] && t=$(mktemp -d 2>/dev/null) && mkfifo \"$t/p\"; then\n"
         "  $H < \"$t/p\" > \"$t/h\" 2>/dev/null &\n"
         "  { " +
         read +
         "; echo $? > \"$t/s\"; } | tee \"$t/p\"\n"
         "  wait\n"
         "  s=$(cat \"$t/s\" 2>/dev/null); h=$(cut -c1-64 < \"$t/h\")\n"
         "  rm -rf -- \"$t\"\n"
         "else\n  " +
         read +
         "\n"
         "  s=$?\n"
         "fi\n"
         "printf 'gpurent-range\\0%s\\0%s\\0' \"${s:-1}\" \"$h\" >&2\n";
}

Result<RangeReadReport> parse_range_read_report(std::string_view err)
{
  const auto at = err.rfind(std::string(k_report) + '\0');
  if (at == std::string_view::npos) {
    return fail(Errc::invalid_input, "backup: a range read printed no report (the server's shell or dd stopped)");
  }
  const auto f = split_nul_fields(err.substr(at));
  if (f.size() != 3) {
    return fail(Errc::invalid_input, "backup: unreadable range report");
  }
  RangeReadReport r;
  if (f[1] == "missing") {
    r.missing = true;
    return r;
  }
  const auto [p, ec] = std::from_chars(f[1].data(), f[1].data() + f[1].size(), r.dd_status);
  if (ec != std::errc{} || p != f[1].data() + f[1].size() || f[1].empty() || (!f[2].empty() && !is_hex_digest(f[2]))) {
    return fail(Errc::invalid_input, "backup: unreadable range report");
  }
  r.sha256 = std::string(f[2]);
  return r;
}

}  // namespace gpurent
