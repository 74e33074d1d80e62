// SPDX-License-Identifier: MIT
#include "providers/vast/vast_provider.hpp"

#include <utility>

#include "providers/vast/vast_api.hpp"
#include "providers/card.hpp"

namespace gpurent::vast {

namespace {

// At most this many pages of 25 (1000 instances) are read from the paginated list.
constexpr int k_max_pages = 40;

}  // namespace

VastProvider::VastProvider(HttpClient& http, std::string base_url, std::string api_key)
    : m_http(http), m_base(std::move(base_url)), m_key(std::move(api_key))
{
  while (!m_base.empty() && m_base.back() == '/') {
    m_base.pop_back();
  }
  m_v1 = m_base.ends_with("/v0") ? m_base.substr(0, m_base.size() - 3) + "/v1" : m_base;
}

std::optional<std::string> VastProvider::unsupported(Feature f) const
{
  if (f == Feature::hibernate) {
    return "vast has no hibernate state; stop releases the GPU and keeps billing storage";
  }
  return std::nullopt;
}

HttpRequest VastProvider::request(std::string method, std::string_view path, std::string body) const
{
  HttpRequest r;
  r.method = std::move(method);
  r.url = m_base + std::string(path);
  r.headers = {{"Authorization", "Bearer " + m_key}, {"Accept", "application/json"}};
  if (!body.empty()) {
    r.headers.emplace_back("Content-Type", "application/json");
  }
  r.body = std::move(body);
  return r;
}

Result<HttpResponse> VastProvider::call(const HttpRequest& req, std::string_view what)
{
  TRY_ASSIGN(HttpResponse resp, m_http.send(req));
  if (resp.status >= 200 && resp.status < 300) {
    return resp;
  }
  return std::unexpected(http_error("vast: " + std::string(what), resp, error_detail(resp.body)));
}

Result<std::vector<Offer>> VastProvider::fetch_offers()
{
  // Searched with the disk `up` gives an instance, so that the listed price is the one it bills.
  TRY_ASSIGN(HttpResponse resp, call(request("POST", "/bundles/", search_body({}, 0, false, 1000, k_disk_gb)), "search offers"));
  TRY_ASSIGN(auto bundles, parse_bundles(resp.body, k_disk_gb));
  return offers_from(bundles);
}

Result<std::vector<Instance>> VastProvider::list()
{
  // GET /api/v1/instances/ (keyset pagination, at most 25 a page), as vast-cli's show instances
  // reads it; the v0 GET /instances/ is deprecated.
  std::vector<Instance> all;
  std::string token;
  for (int page = 0; page < k_max_pages; ++page) {
    HttpRequest r = request("GET", "", "");
    r.url = m_v1 + "/instances/?" + instances_query(token);
    TRY_ASSIGN(HttpResponse resp, call(r, "list instances"));
    TRY_ASSIGN(InstancePage got, parse_instance_page(resp.body));
    all.insert(all.end(), got.instances.begin(), got.instances.end());
    if (got.next_token.empty()) {
      return all;
    }
    if (got.next_token == token) {
      return fail(Errc::invalid_input, "vast: list instances: the same next_token came back twice; Vast's API may have changed");
    }
    token = got.next_token;
  }
  return fail(Errc::invalid_input, "vast: list instances: more than " + std::to_string(k_max_pages * 25) +
                                       " instances; gpurent reads no further");
}

Result<void> VastProvider::ensure_ssh_key(std::string_view public_key)
{
  auto listed = call(request("GET", "/ssh/"), "list ssh keys");
  std::vector<std::string> keys;
  if (listed) {
    TRY_ASSIGN(keys, parse_ssh_keys(listed->body));
  } else if (listed.error().code != Errc::not_found) {  // 404: "No SSH keys found for the user."
    return std::unexpected(listed.error());
  }
  const std::string wanted = public_key_body(public_key);
  for (const auto& k : keys) {
    if (public_key_body(k) == wanted) {
      return {};
    }
  }
  TRY(call(request("POST", "/ssh/", ssh_key_body(public_key)), "add ssh key"));
  return {};
}

Result<std::optional<Instance>> VastProvider::get(std::string_view id)
{
  auto resp = call(request("GET", "/instances/" + std::string(id) + "/"), "get instance");
  if (!resp) {
    if (resp.error().code == Errc::not_found) {
      return std::optional<Instance>{};
    }
    if (resp.error().code == Errc::invalid_input) {
      return find_listed(*this, id);  // 400 "Invalid instance ID or invalid arguments": the list decides
    }
    return std::unexpected(resp.error());
  }
  return parse_instance(resp->body);
}

Result<Instance> VastProvider::launch(const LaunchRequest& req)
{
  if (req.ssh_public_key.find('\n') != std::string::npos) {
    return fail(Errc::invalid_input, "vast: the SSH public key contains a newline; use a plain OpenSSH public key line");
  }
  TRY_ASSIGN(auto existing, list());
  for (const auto& in : existing) {
    if (in.name == req.name && in.state != InstanceState::terminated) {
      return in;
    }
  }
  const auto names = gpu_names(canonical_card_id(req.card));
  if (names.empty()) {
    return fail(Errc::not_found, "vast: no Vast GPU name is known for card " + req.card + "; see `gpurent offers --provider vast`");
  }
  // Searched with the disk it will have, so that dph_total includes its storage.
  TRY_ASSIGN(HttpResponse found, call(request("POST", "/bundles/", search_body(names, req.gpus, req.spot, 5, k_disk_gb)),
                                      "search offers"));
  TRY_ASSIGN(auto bundles, parse_bundles(found.body, k_disk_gb));
  // What an offer bills: a bid pays storage on top (dph_total includes it already). The ceiling
  // and the choice of the cheapest offer both use it.
  const auto billed = [&](const Bundle& b) { return req.spot && b.min_bid ? *b.min_bid + b.storage_per_hour : b.dph_total; };
  const Bundle* pick = nullptr;
  for (const auto& b : bundles) {
    // Never trust the search filter alone: renting the wrong card or count costs money.
    if (card_of(b.gpu_name, b.gpu_ram_mb) != std::optional<std::string>(canonical_card_id(req.card)) || b.num_gpus != req.gpus) {
      continue;
    }
    const MicroUsd price = billed(b);
    if (req.max_price_per_hour && price > *req.max_price_per_hour) {
      continue;
    }
    if (pick == nullptr || price < billed(*pick)) {
      pick = &b;
    }
  }
  if (pick == nullptr) {
    return fail(bundles.empty() ? Errc::quota : Errc::refused,
                "vast: no rentable offer for " + req.card + " x" + std::to_string(req.gpus) +
                    (bundles.empty() ? " right now; try later or another card" : " within the price ceiling (the quote confirmed, or --max-price); raise --max-price"));
  }
  const std::optional<MicroUsd> bid = req.spot ? std::optional<MicroUsd>(pick->min_bid.value_or(pick->dph_total)) : std::nullopt;
  TRY(ensure_ssh_key(req.ssh_public_key));
  const std::string body = create_body(req.image.empty() ? std::string(k_default_image) : req.image, req.name,
                                       k_disk_gb, bid);
  TRY_ASSIGN(HttpResponse created, call(request("PUT", "/asks/" + std::to_string(pick->id) + "/", body), "create instance"));
  TRY_ASSIGN(std::string id, parse_create(created.body));
  Instance in;
  in.id = id;
  in.name = req.name;
  in.state = InstanceState::pending;
  in.raw_state = "null";
  in.card = req.card;
  in.gpus = req.gpus;
  // A bid is for the GPU; storage bills on top (dph_total already includes it). The instance's
  // own dph_total replaces this once it exists.
  in.price_per_hour = bid && pick->min_bid ? *bid + pick->storage_per_hour : pick->dph_total;
  in.storage_per_hour = pick->storage_per_hour;
  in.region = pick->geolocation;
  return in;
}

Result<void> VastProvider::stop(std::string_view id)
{
  TRY(call(request("PUT", "/instances/" + std::string(id) + "/", state_body("stopped")), "stop instance"));
  return {};
}

Result<void> VastProvider::start(std::string_view id)
{
  TRY(call(request("PUT", "/instances/" + std::string(id) + "/", state_body("running")), "start instance"));
  return {};
}

Result<void> VastProvider::hibernate(std::string_view)
{
  return fail(Errc::unsupported, "vast: " + *unsupported(Feature::hibernate));
}

Result<void> VastProvider::terminate(std::string_view id)
{
  // One DELETE; 404 {"error": "not_found"} comes back as Errc::not_found ("already gone"), to be
  // confirmed with get().
  TRY(call(request("DELETE", "/instances/" + std::string(id) + "/"), "destroy instance"));
  return {};
}

}  // namespace gpurent::vast
