// SPDX-License-Identifier: MIT
#include "sync/remote_listing.hpp"

#include <charconv>
#include <unordered_set>

namespace gpurent {
namespace {

// Splits at NUL; the text must end with a NUL (a trailing partial field is an error).
Result<std::vector<std::string_view>> nul_fields(std::string_view out)
{
  if (!out.empty() && out.back() != '\0') {
    return fail(Errc::invalid_input, "remote listing: output cut short; run the backup again");
  }
  return split_nul_fields(out);
}

template <class T>
std::optional<T> parse_int(std::string_view s, int base = 10)
{
  T v{};
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc{} || p != s.data() + s.size() || s.empty()) {
    return std::nullopt;
  }
  return v;
}

}  // namespace

std::vector<std::string_view> split_nul_fields(std::string_view out)
{
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (start < out.size()) {
    const auto nul = out.find('\0', start);
    if (nul == std::string_view::npos) {
      break;
    }
    fields.push_back(out.substr(start, nul - start));
    start = nul + 1;
  }
  return fields;
}

std::string shell_quote(std::string_view s)
{
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

std::string command_line_text(const std::vector<std::string>& words)
{
  if (words.size() == 1) {
    return words.front();
  }
  std::string out;
  for (const auto& w : words) {
    out += (out.empty() ? "" : " ") + shell_quote(w);
  }
  return out;
}

std::string remote_shell_path(std::string_view path)
{
  if (path.empty() || path == "~" || path == "~/") {
    return ".";
  }
  if (path.starts_with("~/")) {
    path.remove_prefix(2);
  }
  if (path.starts_with('/') || path.starts_with("./") || path == ".") {
    return shell_quote(path);
  }
  // Relative: "./" first, so a name that starts with '-' never reads as an option of find,
  // tar, dd, stat, rm, ... (find takes no "--" before its paths).
  return shell_quote("./" + std::string(path));
}

std::string find_listing_command(std::string_view root)
{
  return "LC_ALL=C find -H " + remote_shell_path(root) + " -mindepth 1 -printf '%y\\0%s\\0%T@\\0%m\\0%P\\0%l\\0'";
}

std::optional<std::int64_t> parse_epoch_ns(std::string_view s) noexcept
{
  bool negative = false;
  if (!s.empty() && s.front() == '-') {
    negative = true;
    s.remove_prefix(1);
  }
  const auto dot = s.find('.');
  const auto whole = parse_int<std::int64_t>(s.substr(0, dot));
  if (!whole || *whole < 0 || *whole > 9'000'000'000LL) {  // one sign only
    return std::nullopt;
  }
  std::int64_t frac = 0;
  if (dot != std::string_view::npos) {
    const auto digits = s.substr(dot + 1);
    if (digits.empty()) {
      return std::nullopt;
    }
    std::int64_t scale = 100'000'000;
    for (const char c : digits) {
      if (c < '0' || c > '9') {
        return std::nullopt;
      }
      frac += (c - '0') * scale;
      scale /= 10;
    }
  }
  const std::int64_t ns = *whole * 1'000'000'000LL + frac;
  return negative ? -ns : ns;
}

Result<std::vector<RemoteEntry>> parse_find_listing(std::string_view out)
{
  TRY_ASSIGN(const auto fields, nul_fields(out));
  if (fields.size() % 6 != 0) {
    return fail(Errc::invalid_input, "remote listing: unexpected field count; is GNU find installed on the server?");
  }
  std::vector<RemoteEntry> entries;
  entries.reserve(fields.size() / 6);
  for (std::size_t i = 0; i < fields.size(); i += 6) {
    RemoteEntry e;
    const auto type = fields[i];
    if (type == "f") {
      e.kind = EntryKind::file;
    } else if (type == "d") {
      e.kind = EntryKind::directory;
    } else if (type == "l") {
      e.kind = EntryKind::symlink;
    } else if (type.size() == 1) {
      e.kind = EntryKind::other;
    } else {
      return fail(Errc::invalid_input, "remote listing: bad type field; is GNU find installed on the server?");
    }
    const auto size = parse_int<std::uint64_t>(fields[i + 1]);
    const auto mtime = parse_epoch_ns(fields[i + 2]);
    const auto mode = parse_int<std::uint32_t>(fields[i + 3], 8);
    if (!size || !mtime || !mode || *mode > 07777) {
      return fail(Errc::invalid_input, "remote listing: bad size, time or mode field; is GNU find installed on the server?");
    }
    e.size = *size;
    e.mtime_ns = *mtime;
    e.mode = *mode;
    e.path = std::string(fields[i + 4]);
    e.link_target = std::string(fields[i + 5]);
    entries.push_back(std::move(e));
  }
  return entries;
}

std::string render_find_listing(const std::vector<RemoteEntry>& entries)
{
  std::string out;
  for (const auto& e : entries) {
    const char* type = "f";
    if (e.kind == EntryKind::directory) {
      type = "d";
    } else if (e.kind == EntryKind::symlink) {
      type = "l";
    } else if (e.kind == EntryKind::other) {
      type = "p";
    }
    const std::int64_t secs = e.mtime_ns / 1'000'000'000LL;
    std::int64_t frac = e.mtime_ns % 1'000'000'000LL;
    std::string sign;
    std::int64_t s = secs;
    if (e.mtime_ns < 0) {
      sign = "-";
      s = -secs;
      frac = -frac;
    }
    char octal[16];
    const auto r = std::to_chars(octal, octal + sizeof octal, e.mode, 8);
    std::string fr = std::to_string(frac);
    fr.insert(0, 9 - fr.size(), '0');
    out += type;
    out.push_back('\0');
    out += std::to_string(e.size);
    out.push_back('\0');
    out += sign + std::to_string(s) + "." + fr + "0";
    out.push_back('\0');
    out.append(octal, r.ptr);
    out.push_back('\0');
    out += e.path;
    out.push_back('\0');
    out += e.link_target;
    out.push_back('\0');
  }
  return out;
}

std::string hash_command(std::string_view root)
{
  return "cd -- " + remote_shell_path(root) + " || exit 3\n" + hash_script();
}

namespace {

// Picks the hashing tool, OpenSSL first: T is its name ("none" where there is none), "$@" its
// command over the names that follow; prints T and a NUL, which parse_hash_output reads first.
constexpr std::string_view k_pick_hash_tool =
    "if openssl dgst -sha256 -r -- /dev/null >/dev/null 2>&1; then T=openssl; set -- openssl dgst -sha256 -r --\n"
    "elif printf '' | sha256sum -z >/dev/null 2>&1; then T=sha256sum; set -- sha256sum -z --\n"
    "elif command -v shasum >/dev/null 2>&1; then T=shasum; set -- shasum -a 256 --\n"
    "else T=none; fi\n"
    "printf '%s\\0' \"$T\"\n";

}  // namespace

std::string hash_script()
{
  return std::string(k_pick_hash_tool) + "if [ \"$T\" = none ]; then cat >/dev/null; else exec xargs -0 \"$@\"; fi\n";
}

std::string parallel_hash_script(std::string_view list)
{
  const std::string l = "\"$" + std::string(list) + "\"";
  return std::string(k_pick_hash_tool) +
         "if [ \"$T\" != none ]; then\n"
         "  p=$(nproc 2>/dev/null) || p=1\n"
         "  case $p in ''|*[!0-9]*) p=1;; esac\n"
         "  [ \"$p\" -gt 4 ] && p=4\n"
         "  if [ \"$p\" -gt 1 ] && [ \"$(wc -c < " + l + ")\" -ge 16384 ] && split -d -a 1 -t '\\0' -n \"l/$p\" -- " + l + " " + l +
         ".p 2>/dev/null; then\n"
         "    i=0; while [ $i -lt $p ]; do xargs -0 -r \"$@\" < " + l + ".p$i > " + l + ".h$i 2>/dev/null & i=$((i+1)); done\n"
         "    wait\n"
         "    i=0; while [ $i -lt $p ]; do cat " + l + ".h$i 2>/dev/null; i=$((i+1)); done\n"
         "  else xargs -0 -r \"$@\" < " + l + " 2>/dev/null; fi\n"
         "fi\n";
}

bool is_hex_digest(std::string_view s) noexcept
{
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

namespace {

// The length of `name`'s record at the start of `rest` ("<64 hex> *<name>\n"), 0 when it is not
// there. OpenSSL 3 writes a name holding a newline as coreutils does (the record starts with a
// backslash and each newline is written "\\n"); OpenSSL 1.1 writes it raw. Both are accepted.
std::size_t openssl_record_length(std::string_view rest, const std::string& name)
{
  std::string shown = name;
  std::size_t skip = 0;
  if (name.find('\n') != std::string::npos && rest.starts_with('\\')) {
    skip = 1;
    shown.clear();
    for (const char c : name) {
      shown += c == '\n' ? std::string("\\n") : std::string(1, c);
    }
  }
  rest.remove_prefix(skip);
  const std::size_t len = 64 + 2 + shown.size() + 1;
  if (rest.size() >= len && is_hex_digest(rest.substr(0, 64)) && rest.substr(64, 2) == " *" &&
      rest.substr(66, shown.size()) == shown && rest[66 + shown.size()] == '\n') {
    return skip + len;
  }
  return 0;
}

// One record per file, in the order asked; files openssl could not read are missing.
void parse_openssl_records(std::string_view rest, const std::vector<std::string>& asked, HashOutput& h)
{
  std::size_t next = 0;
  while (!rest.empty() && next < asked.size()) {
    bool matched = false;
    for (std::size_t k = next; k < asked.size(); ++k) {
      const std::size_t len = openssl_record_length(rest, asked[k]);
      if (len > 0) {
        const std::size_t skip = rest.starts_with('\\') ? 1 : 0;
        h.sums[asked[k]] = std::string(rest.substr(skip, 64));
        rest.remove_prefix(len);
        next = k + 1;
        matched = true;
        break;
      }
    }
    if (!matched) {
      return;  // not openssl's format: what was matched so far stands, the rest fails verification
    }
  }
}

}  // namespace

Result<HashOutput> parse_hash_output(std::string_view out, const std::vector<std::string>& asked)
{
  const auto nul = out.find('\0');
  if (nul == std::string_view::npos) {
    return fail(Errc::invalid_input, "remote hashing: no output; is a POSIX shell the login shell on the server?");
  }
  HashOutput h;
  h.tool = std::string(out.substr(0, nul));
  if (h.tool != "openssl" && h.tool != "sha256sum" && h.tool != "shasum" && h.tool != "none") {
    return fail(Errc::invalid_input, "remote hashing: unexpected output; is a POSIX shell the login shell on the server?");
  }
  std::string_view rest = out.substr(nul + 1);
  if (h.tool == "openssl") {
    parse_openssl_records(rest, asked, h);
    return h;
  }
  // Only records of names asked count: an extra line (or two records run together) must not
  // stand as the hash of some file.
  const std::unordered_set<std::string_view> wanted(asked.begin(), asked.end());
  const char sep = h.tool == "sha256sum" ? '\0' : '\n';
  while (!rest.empty()) {
    const auto end = rest.find(sep);
    const auto record = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    // "<64 hex><space><space or *><name>"
    if (record.size() < 67 || record[64] != ' ' || (record[65] != ' ' && record[65] != '*')) {
      continue;
    }
    const auto hex = record.substr(0, 64);
    if (hex.find_first_not_of("0123456789abcdef") != std::string_view::npos) {
      continue;
    }
    const auto name = record.substr(66);
    if (wanted.contains(name)) {
      h.sums[std::string(name)] = std::string(hex);
    }
  }
  return h;
}

}  // namespace gpurent
