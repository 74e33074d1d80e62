// SPDX-License-Identifier: MIT
#include "providers/market/catalog_cache.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>
#include <tuple>

#include "common/clock.hpp"
#include "providers/atomic_file.hpp"
#include "providers/state_store.hpp"

namespace gpurent::market {
namespace {

constexpr std::string_view k_magic = "gpurent-catalog-offers\t1";
constexpr std::int64_t k_max_unix = 4'102'444'800;  // 2100-01-01: later is damage
constexpr std::int64_t k_max_micro = 100'000LL * 1'000'000;  // $100000/h
constexpr std::int64_t k_max_gpus = 64;

// Text fields: control characters (a tab or newline would break the format) become spaces.
std::string clean(std::string_view s)
{
  std::string out(s);
  for (auto& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      c = ' ';
    }
  }
  return out;
}

bool has_control(std::string_view s)
{
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// A header value we would send back: dropped when it holds a control character.
std::string header_value(std::string_view s) { return has_control(s) ? std::string() : std::string(s); }

std::string day_of(CatalogTime t) { return utc_iso8601(t).substr(0, 10); }

Error damaged(std::size_t line, std::string_view why)
{
  return Error{Errc::invalid_input, "line " + std::to_string(line) + ": " + std::string(why)};
}

// Splits `line` at tabs into exactly N fields; false when the count differs.
template <std::size_t N>
bool split_fields(std::string_view line, std::array<std::string_view, N>& out)
{
  std::size_t i = 0;
  for (;;) {
    const auto tab = line.find('\t');
    if (i == N) {
      return false;
    }
    out[i++] = line.substr(0, tab);
    if (tab == std::string_view::npos) {
      break;
    }
    line.remove_prefix(tab + 1);
  }
  return i == N;
}

std::optional<std::int64_t> whole(std::string_view s, std::int64_t lo, std::int64_t hi)
{
  if (s.empty() || s.front() == '-' || s.front() == '+') {
    return std::nullopt;
  }
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || v < lo || v > hi) {
    return std::nullopt;
  }
  return v;
}

Result<void> write_atomically(const std::filesystem::path& path, std::string_view text)
{
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) {
    return fail(Errc::internal, "cannot create the catalogue cache " + path.parent_path().string() + ": " + ec.message());
  }
  return write_file_atomically(path.string(), std::string(text), 0644);
}

Result<std::optional<std::string>> read_whole(const std::filesystem::path& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      return std::optional<std::string>{};
    }
    return fail(Errc::internal, "cannot read " + path.string() + "; check its permissions");
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return std::optional<std::string>{ss.str()};
}

}  // namespace

const CachedCloud* CatalogCache::find(std::string_view cloud) const noexcept
{
  for (const auto& c : clouds) {
    if (c.cloud == cloud) {
      return &c;
    }
  }
  return nullptr;
}

Result<std::filesystem::path> catalog_cache_dir(const std::function<std::optional<std::string>(const std::string&)>& env)
{
  if (auto xdg = env("XDG_CACHE_HOME")) {
    return std::filesystem::path(*xdg) / "gpurent" / "catalog";
  }
  if (auto home = env("HOME")) {
    return std::filesystem::path(*home) / ".cache" / "gpurent" / "catalog";
  }
  return fail(Errc::invalid_input, "cannot locate the cache directory: neither XDG_CACHE_HOME nor HOME is set");
}

std::filesystem::path catalog_offers_path(const std::filesystem::path& dir) { return dir / "offers.tsv"; }

std::filesystem::path catalog_raw_path(const std::filesystem::path& dir, std::string_view cloud)
{
  return dir / std::string(k_catalog_schema) / (std::string(cloud) + ".csv");
}

std::string catalog_cache_to_text(const CatalogCache& cache)
{
  std::string out;
  out.reserve(64 + cache.offers.size() * 64);
  out.append(k_magic).append("\ntried\t").append(std::to_string(to_unix(cache.tried_at))).append("\n");
  for (const auto& c : cache.clouds) {
    out.append("cloud\t").append(clean(c.cloud)).append("\t").append(std::to_string(to_unix(c.fetched_at)));
    out.append("\t").append(std::to_string(to_unix(c.checked_at))).append("\t").append(clean(c.made_by));
    out.append("\t").append(header_value(c.validators.etag)).append("\t").append(header_value(c.validators.last_modified));
    out.append("\t").append(std::to_string(c.count)).append("\n");
    std::vector<const Offer*> sorted;
    for (std::size_t i = c.first; i < c.first + c.count && i < cache.offers.size(); ++i) {
      sorted.push_back(&cache.offers[i]);
    }
    std::stable_sort(sorted.begin(), sorted.end(), [](const Offer* a, const Offer* b) {
      return std::tie(a->card, a->gpus, a->price_per_hour) < std::tie(b->card, b->gpus, b->price_per_hour);
    });
    for (const Offer* op : sorted) {
      const Offer& o = *op;
      out.append("o\t").append(clean(o.card)).append("\t").append(std::to_string(o.gpus));
      out.append("\t").append(std::to_string(o.price_per_hour.n)).append("\t");
      if (o.spot_price_per_hour) {
        out.append(std::to_string(o.spot_price_per_hour->n));
      }
      out.append("\t").append(clean(o.region)).append("\t").append(clean(o.instance_type));
      out.append("\t").append(clean(o.upstream)).append("\t");
      if (o.gpu_only) {
        out.append("g");
      }
      if (o.spot_above_on_demand) {
        out.append("s");
      }
      out.append("\n");
    }
  }
  out.append("end\n");
  return out;
}

Result<CatalogCache> catalog_cache_from_text(std::string_view text, CatalogLoad load)
{
  CatalogCache cache;
  const bool cheapest = load == CatalogLoad::cheapest_per_shape;
  std::map<std::pair<std::string_view, std::int64_t>, std::size_t> shapes;  // (card, GPUs) -> index, cheapest mode
  std::size_t line_no = 0;
  auto next_line = [&]() -> std::optional<std::string_view> {
    if (text.empty()) {
      return std::nullopt;
    }
    const auto nl = text.find('\n');
    if (nl == std::string_view::npos) {
      return std::nullopt;  // every line ends with a newline: this one was cut
    }
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    ++line_no;
    return line;
  };
  auto line = next_line();
  if (!line || *line != k_magic) {
    return std::unexpected(damaged(1, "not a gpurent catalogue offers file (format 1)"));
  }
  line = next_line();
  std::array<std::string_view, 2> tried{};
  if (!line || !split_fields(*line, tried) || tried[0] != "tried") {
    return std::unexpected(damaged(line_no + 1, "expected `tried`"));
  }
  const auto tried_unix = whole(tried[1], 0, k_max_unix);
  if (!tried_unix) {
    return std::unexpected(damaged(line_no, "an impossible time"));
  }
  cache.tried_at = from_unix(*tried_unix);
  for (;;) {
    line = next_line();
    if (!line) {
      return std::unexpected(damaged(line_no + 1, "the file ends early (no `end` line)"));
    }
    if (*line == "end") {
      break;
    }
    std::array<std::string_view, 8> f{};
    if (!split_fields(*line, f) || f[0] != "cloud") {
      return std::unexpected(damaged(line_no, "expected `cloud` and 7 fields, or `end`"));
    }
    CachedCloud c;
    const auto fetched = whole(f[2], 0, k_max_unix);
    const auto checked = whole(f[3], 0, k_max_unix);
    const auto count = whole(f[7], 0, 10'000'000);
    if (f[1].empty() || has_control(f[1]) || !fetched || !checked || !count) {
      return std::unexpected(damaged(line_no, "a cloud line with a bad name, time or count"));
    }
    if (!cache.clouds.empty() && cache.clouds.back().cloud >= f[1]) {
      return std::unexpected(damaged(line_no, "clouds out of order or repeated"));
    }
    c.cloud = std::string(f[1]);
    c.fetched_at = from_unix(*fetched);
    c.checked_at = from_unix(*checked);
    c.made_by = std::string(f[4]);
    c.validators.etag = std::string(f[5]);
    c.validators.last_modified = std::string(f[6]);
    c.first = cache.offers.size();
    const auto lines = static_cast<std::size_t>(*count);
    if (!cheapest) {
      // No more than the rest of the text can hold (an offer line is at least 13 bytes): a damaged
      // count of millions must not reserve gigabytes before the lines are found missing.
      constexpr std::size_t k_min_offer_line = 13;
      cache.offers.reserve(cache.offers.size() + std::min(lines, text.size() / k_min_offer_line));
    }
    shapes.clear();
    std::pair<std::string_view, std::int64_t> previous;
    std::size_t previous_index = 0;
    bool have_previous = false;
    const std::string day = day_of(c.checked_at);
    for (std::size_t i = 0; i < lines && load == CatalogLoad::clouds_only; ++i) {
      if (!next_line()) {
        return std::unexpected(damaged(line_no + 1, "the file ends early (offers of " + c.cloud + " missing)"));
      }
    }
    for (std::size_t i = 0; i < lines && load != CatalogLoad::clouds_only; ++i) {
      line = next_line();
      std::array<std::string_view, 9> o{};
      if (!line || !split_fields(*line, o) || o[0] != "o") {
        return std::unexpected(damaged(line_no + (line ? 0 : 1), "expected an offer line (`o` and 8 fields) of " + c.cloud));
      }
      const auto gpus = whole(o[2], 1, k_max_gpus);
      const auto price = whole(o[3], 1, k_max_micro);
      const auto spot = o[4].empty() ? std::optional<std::int64_t>(0) : whole(o[4], 1, k_max_micro);
      const bool flags_ok = o[8].empty() || o[8] == "g" || o[8] == "s" || o[8] == "gs";
      // The writer never writes a control character (clean() makes it a space): one here is damage,
      // and kept it would sort apart from the space it renders as.
      const bool text_ok = !has_control(o[1]) && !has_control(o[5]) && !has_control(o[6]) && !has_control(o[7]);
      if (o[1].empty() || !gpus || !price || !spot || !flags_ok || !text_ok) {
        return std::unexpected(damaged(line_no, "an offer of " + c.cloud + " with a bad card, GPU count, price or flag"));
      }
      // Cheapest mode: the writer lists a shape's offers together, cheapest first, so a line is
      // mostly the previous line's shape (skipped unless cheaper); a shape met again later (a file
      // not written that way) is found in `shapes` and its kept offer replaced in place when cheaper.
      std::size_t at = cache.offers.size();
      if (cheapest) {
        const auto key = std::make_pair(o[1], *gpus);
        bool seen = have_previous && key == previous;
        std::size_t index = previous_index;
        if (!seen) {
          if (const auto it = shapes.find(key); it != shapes.end()) {
            seen = true;
            index = it->second;
          }
        }
        if (seen && cache.offers[index].price_per_hour.n <= *price) {
          continue;  // checked, not kept: a dearer region of a shape already kept
        }
        if (seen) {
          at = index;
        } else {
          shapes.emplace(key, at);
        }
        previous = key;
        previous_index = at;
        have_previous = true;
      }
      if (at < cache.offers.size()) {
        cache.offers[at] = Offer{};  // a cheaper region of a kept shape replaces it
      }
      Offer& off = at < cache.offers.size() ? cache.offers[at] : cache.offers.emplace_back();
      off.provider = c.cloud;
      off.card = std::string(o[1]);
      off.gpus = static_cast<std::uint32_t>(*gpus);
      off.price_per_hour = MicroUsd{*price};
      if (!o[4].empty()) {
        off.spot_price_per_hour = MicroUsd{*spot};
      }
      off.region = std::string(o[5]);
      off.instance_type = std::string(o[6]);
      off.upstream = std::string(o[7]);
      off.gpu_only = o[8].find('g') != std::string_view::npos;
      off.spot_above_on_demand = o[8].find('s') != std::string_view::npos;
      off.price_origin = "catalogue";
      off.price_source = "catalogue";
      off.price_date = day;
    }
    c.count = cache.offers.size() - c.first;
    cache.clouds.push_back(std::move(c));
  }
  if (!text.empty()) {
    return std::unexpected(damaged(line_no + 1, "text after the `end` line"));
  }
  return cache;
}

Result<std::optional<CatalogCache>> load_catalog_cache(const std::filesystem::path& dir, CatalogLoad load)
{
  const auto path = catalog_offers_path(dir);
  TRY_ASSIGN(const std::optional<std::string> text, read_whole(path));
  if (!text) {
    return std::optional<CatalogCache>{};
  }
  auto parsed = catalog_cache_from_text(*text, load);
  if (!parsed) {
    return fail(Errc::invalid_input, "catalogue cache " + path.string() + " " + parsed.error().message +
                                         "; run `gpurent offers --refresh` to rebuild it");
  }
  return std::optional<CatalogCache>{std::move(*parsed)};
}

Result<void> save_catalog_cache(const std::filesystem::path& dir, const CatalogCache& cache)
{
  return write_atomically(catalog_offers_path(dir), catalog_cache_to_text(cache));
}

Result<std::optional<std::string>> read_cached_catalog(const std::filesystem::path& dir, std::string_view cloud)
{
  return read_whole(catalog_raw_path(dir, cloud));
}

Result<void> store_catalog(const std::filesystem::path& dir, std::string_view cloud, std::string_view text)
{
  return write_atomically(catalog_raw_path(dir, cloud), text);
}

void put_cloud(CatalogCache& cache, CachedCloud entry, std::vector<Offer> offers)
{
  // Rebuilt in cloud order: every other cloud keeps its offers, this one gets the new ones.
  std::vector<CachedCloud> clouds;
  std::vector<Offer> all;
  all.reserve(cache.offers.size() + offers.size());
  bool placed = false;
  auto place_new = [&] {
    entry.first = all.size();
    entry.count = offers.size();
    for (auto& o : offers) {
      all.push_back(std::move(o));
    }
    clouds.push_back(entry);
    placed = true;
  };
  for (const auto& c : cache.clouds) {
    if (!placed && entry.cloud <= c.cloud) {
      place_new();
    }
    if (c.cloud == entry.cloud) {
      continue;
    }
    CachedCloud kept = c;
    kept.first = all.size();
    for (std::size_t i = c.first; i < c.first + c.count && i < cache.offers.size(); ++i) {
      all.push_back(cache.offers[i]);
    }
    kept.count = all.size() - kept.first;
    clouds.push_back(std::move(kept));
  }
  if (!placed) {
    place_new();
  }
  cache.clouds = std::move(clouds);
  cache.offers = std::move(all);
}

}  // namespace gpurent::market
