// SPDX-License-Identifier: MIT
// The catalogue reader: libcsv splits the text into records (quotes, embedded commas and line
// breaks); this file finds the columns by name and reads each GPU row's values.
#include "providers/market/catalog_csv.hpp"

#include <csv.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "common/text.hpp"

namespace gpurent::market {
namespace {

constexpr std::size_t k_max_warnings = 50;          // then one line saying how many more
constexpr std::int64_t k_max_usd_per_hour = 100'000;  // the bound of every price in gpurent
constexpr std::uint32_t k_max_accelerators = 1024;

// The columns of catalogs/v7 and v8 vms.csv (headers differ by cloud: found by name).
enum Column : std::size_t {
  instance_type,
  accelerator_name,
  accelerator_count,
  vcpus,
  memory_gib,
  gpu_info,
  region,
  zone,
  price,
  spot_price,
  upstream,
  column_count
};
constexpr std::array<const char*, column_count> k_names = {
    "InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs",     "MemoryGiB",      "GpuInfo",
    "Region",       "AvailabilityZone", "Price",           "SpotPrice", "UpstreamCloudId"};
// SpotPrice is not required: simplepod's v7 file has no such column (a cloud without spot).
constexpr std::array<bool, column_count> k_required = {true, true, true, false, false, false,
                                                       true, false, true, false, false};

// What libcsv hands over: the fields of the record being read, and each finished record with the
// line it ends on.
struct Records {
  std::vector<std::string> fields;
  std::vector<std::pair<std::size_t, std::vector<std::string>>> done;
  std::size_t line = 1;
  bool at_end = false;       // csv_fini is finishing the last record (no line break after it)
  bool last_unended = false;
};

void on_field(void* s, std::size_t len, void* data)
{
  auto* r = static_cast<Records*>(data);
  r->fields.emplace_back(static_cast<const char*>(s), s == nullptr ? 0 : len);
}

void on_record(int /*terminator*/, void* data)
{
  auto* r = static_cast<Records*>(data);
  r->done.emplace_back(r->line, std::move(r->fields));
  r->fields.clear();
  if (r->at_end) {
    r->last_unended = true;
  }
}

Error file_error(std::string_view cloud, std::size_t line, const std::string& what)
{
  return Error{Errc::invalid_input, "catalogue " + std::string(cloud) + ", line " + std::to_string(line) + ": " + what};
}

struct RowReader {
  std::string_view cloud;
  std::array<std::optional<std::size_t>, column_count> at{};
  CatalogFile* out = nullptr;
  std::size_t dropped_warnings = 0;

  void warn(std::size_t line, std::string_view column, const std::string& what)
  {
    if (out->warnings.size() >= k_max_warnings) {
      ++dropped_warnings;
      return;
    }
    out->warnings.push_back(CatalogWarning{
        line, "catalogue " + std::string(cloud) + ", line " + std::to_string(line) + ", " + std::string(column) + ": " + what});
  }

  [[nodiscard]] std::string field(const std::vector<std::string>& f, Column c) const
  {
    return at[c] && *at[c] < f.size() ? std::string(trim(f[*at[c]])) : std::string();
  }

  std::optional<double> number(const std::vector<std::string>& f, Column c, std::size_t line)
  {
    const std::string v = field(f, c);
    if (v.empty()) {
      return std::nullopt;
    }
    // common/text's strtod-based reader: std::from_chars for doubles would bring libm (its rounding
    // mode calls) into the executable, which starts with libc alone (tests/e2e/test_startup_deps.sh).
    const std::optional<double> d = parse_double(v);
    if (!d || *d < 0) {
      warn(line, k_names[c], "`" + v.substr(0, 40) + "` is not a number");
      return std::nullopt;
    }
    return *d;
  }

  // A price: absent when empty, a placeholder (0 for spot, 99999999, a TPU's 700) or not a number.
  std::optional<MicroUsd> money(const std::vector<std::string>& f, Column c, std::size_t line, std::string_view name)
  {
    const std::string v = field(f, c);
    if (v.empty()) {
      return std::nullopt;
    }
    if (v.find_first_not_of('9') == std::string::npos && v.size() >= 6) {
      return std::nullopt;  // 99999999: primeintellect's "no spot" placeholder
    }
    const auto m = parse_catalog_usd(v);
    if (!m) {
      warn(line, k_names[c], "`" + v.substr(0, 40) + "` is not a price (USD per hour); the row has no " +
                                 (c == price ? "on-demand" : "spot") + " price");
      return std::nullopt;
    }
    if (m->n == 0) {
      if (c == price) {
        warn(line, k_names[c], "a price of 0 is not a price; the row is not offered");
      }
      return std::nullopt;  // a spot of 0.00: vast's marketplace rows carry no spot price
    }
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (lower.starts_with("tpu") && *m == MicroUsd{700 * k_micro_per_unit}) {
      return std::nullopt;  // GCP's TPU rows carry 700.0 as a placeholder
    }
    return m;
  }

  void row(std::size_t line, const std::vector<std::string>& f)
  {
    CatalogRow r;
    r.line = line;
    r.accelerator_name = field(f, accelerator_name);
    if (r.accelerator_name.empty()) {
      return;  // a CPU instance
    }
    r.instance_type = field(f, instance_type);
    r.gpu_info = field(f, gpu_info);
    r.region = field(f, region);
    r.zone = field(f, zone);
    r.upstream = field(f, upstream);
    r.vcpus = number(f, vcpus, line);
    r.memory_gib = number(f, memory_gib, line);
    r.price = money(f, price, line, r.accelerator_name);
    r.spot_price = money(f, spot_price, line, r.accelerator_name);
    const auto count = number(f, accelerator_count, line);
    if (count && *count >= 1 && *count <= k_max_accelerators && std::floor(*count) == *count) {
      r.accelerator_count = static_cast<std::uint32_t>(*count);
    } else {
      if (count) {
        warn(line, k_names[accelerator_count], "must be a whole number of GPUs, 1.." + std::to_string(k_max_accelerators));
      } else if (field(f, accelerator_count).empty()) {
        warn(line, k_names[accelerator_count], "empty");
      }
      r.price.reset();  // a row whose GPUs cannot be counted is not offered
      r.spot_price.reset();
    }
    out->rows.push_back(std::move(r));
  }
};

Result<void> read_header(std::string_view cloud, const std::vector<std::string>& header, RowReader& reader)
{
  std::map<std::string, std::size_t, std::less<>> seen;
  for (std::size_t i = 0; i < header.size(); ++i) {
    std::string name(trim(header[i]));
    if (i == 0 && name.starts_with("\xEF\xBB\xBF")) {
      name.erase(0, 3);  // a UTF-8 byte-order mark
    }
    if (!seen.emplace(name, i).second) {
      return std::unexpected(file_error(cloud, 1, "the column `" + name.substr(0, 40) + "` is given twice"));
    }
  }
  std::string missing;
  for (std::size_t c = 0; c < column_count; ++c) {
    const auto it = seen.find(k_names[c]);
    if (it != seen.end()) {
      reader.at[c] = it->second;
    } else if (k_required[c]) {
      missing += (missing.empty() ? "" : ", ") + std::string(k_names[c]);
    }
  }
  if (!missing.empty()) {
    return std::unexpected(file_error(cloud, 1, "unknown column layout (not catalogue v7/v8 vms.csv): no " + missing + " column"));
  }
  return {};
}

}  // namespace

std::optional<MicroUsd> parse_catalog_usd(std::string_view text)
{
  const auto dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  const auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (whole.empty() || whole.size() > 6 || !digits(whole) || !digits(frac) ||
      (dot != std::string_view::npos && frac.empty())) {
    return std::nullopt;
  }
  std::int64_t units = 0;
  for (const char c : whole) {
    units = units * 10 + (c - '0');
  }
  std::int64_t micro = 0;
  std::int64_t scale = k_micro_per_unit;
  for (std::size_t i = 0; i < frac.size() && i < 6; ++i) {
    scale /= 10;
    micro += (frac[i] - '0') * scale;
  }
  if (frac.size() > 6 && frac[6] >= '5') {
    ++micro;  // 0.36979999999999996 -> 0.369800: the float artifact rounded to whole micro-dollars
  }
  const std::int64_t total = units * k_micro_per_unit + micro;
  if (total >= k_max_usd_per_hour * k_micro_per_unit) {
    return std::nullopt;
  }
  return MicroUsd{total};
}

Result<CatalogFile> read_catalog_csv(std::string_view cloud, std::string_view text)
{
  const std::string_view start = trim(text);
  if (start.empty()) {
    return std::unexpected(file_error(cloud, 1, "empty: not a catalogue"));
  }
  if (start.front() == '<') {
    return std::unexpected(file_error(cloud, 1, "an HTML or XML page, not CSV"));
  }
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    const auto line = static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n')) + 1;
    return std::unexpected(file_error(cloud, line, "binary data (a NUL byte), not CSV"));
  }
  csv_parser parser{};
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI) != 0) {
    return std::unexpected(file_error(cloud, 1, "cannot start the CSV parser"));
  }
  Records records;
  RowReader reader;
  reader.cloud = cloud;
  CatalogFile out;
  out.cloud = std::string(cloud);
  reader.out = &out;
  bool have_header = false;
  std::size_t header_fields = 0;
  Result<void> failed;
  // One line at a time, so that each record knows the line it ends on.
  const auto drain = [&]() -> Result<void> {
    for (auto& [line, fields] : records.done) {
      if (!have_header) {
        TRY(read_header(cloud, fields, reader));
        have_header = true;
        header_fields = fields.size();
        continue;
      }
      if (fields.size() != header_fields) {
        if (records.last_unended && &fields == &records.done.back().second && fields.size() < header_fields) {
          return std::unexpected(file_error(cloud, line, "truncated last record (" + std::to_string(fields.size()) +
                                                             " of " + std::to_string(header_fields) + " fields)"));
        }
        reader.warn(line, "(row)", std::to_string(fields.size()) + " fields where the header has " +
                                       std::to_string(header_fields) + "; the row is skipped");
        continue;
      }
      reader.row(line, fields);
    }
    records.done.clear();
    return {};
  };
  // A line ends at LF, CR LF or a lone CR (libcsv ends a record at each; a lone CR ending the
  // header once put the first row on line 1).
  const auto line_end = [&](std::size_t from) {
    const auto at = text.find_first_of("\r\n", from);
    if (at == std::string_view::npos) {
      return at;
    }
    return text[at] == '\r' && at + 1 < text.size() && text[at + 1] == '\n' ? at + 1 : at;
  };
  const bool ends_with_break = text.ends_with('\n') || text.ends_with('\r');
  std::size_t pos = 0;
  while (pos < text.size() && failed) {
    const auto nl = line_end(pos);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    const std::size_t len = end - pos;
    if (csv_parse(&parser, text.data() + pos, len, on_field, on_record, &records) != len) {
      failed = std::unexpected(file_error(cloud, records.line, std::string("malformed CSV (") + csv_strerror(csv_error(&parser)) + ")"));
      break;
    }
    failed = drain();
    pos = end;
    if (nl != std::string_view::npos) {
      ++records.line;
    }
  }
  if (failed) {
    records.at_end = true;
    if (csv_fini(&parser, on_field, on_record, &records) != 0) {
      const std::size_t line = ends_with_break ? records.line - 1 : records.line;
      failed = std::unexpected(file_error(cloud, line, "truncated last record (a quoted field is not closed)"));
    } else {
      failed = drain();
    }
  }
  csv_free(&parser);
  if (!failed) {
    return std::unexpected(failed.error());
  }
  if (!have_header) {
    return std::unexpected(file_error(cloud, 1, "no header line"));
  }
  if (reader.dropped_warnings > 0) {
    out.warnings.push_back(CatalogWarning{0, "catalogue " + out.cloud + ": " + std::to_string(reader.dropped_warnings) +
                                                 " more warnings not shown"});
  }
  if (out.rows.empty()) {
    const std::size_t last = ends_with_break ? records.line - 1 : records.line;
    return std::unexpected(file_error(cloud, last, "no GPU rows (no row with an AcceleratorName)"));
  }
  return out;
}

}  // namespace gpurent::market
