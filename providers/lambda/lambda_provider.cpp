// SPDX-License-Identifier: MIT
#include "providers/lambda/lambda_provider.hpp"

#include <cstdio>
#include <utility>

#include "providers/lambda/lambda_api.hpp"
#include "providers/card.hpp"

namespace gpurent::lambda {
namespace {

std::string short_hash(std::string_view s)
{
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return std::string(buf, 8);
}

}  // namespace

LambdaProvider::LambdaProvider(HttpClient& http, std::string base_url, std::string api_key)
    : m_http(http), m_base(std::move(base_url)), m_key(std::move(api_key))
{
  while (!m_base.empty() && m_base.back() == '/') {
    m_base.pop_back();
  }
}

std::optional<std::string> LambdaProvider::unsupported(Feature f) const
{
  switch (f) {
  case Feature::stop:
  case Feature::start:
    return "lambda has no stop operation (its API's instance actions are migrate, rebuild, restart, cold_reboot "
           "and terminate); terminate instead";
  case Feature::hibernate: return "lambda has no hibernate state; terminate instead";
  case Feature::spot: return "lambda's API has no spot or interruptible instances";
  case Feature::offers: return std::nullopt;
  }
  return std::nullopt;
}

HttpRequest LambdaProvider::request(std::string method, std::string_view path, std::string body) const
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

Result<std::string> LambdaProvider::call(const HttpRequest& req, std::string_view what)
{
  TRY_ASSIGN(HttpResponse resp, m_http.send(req));
  if (resp.status >= 200 && resp.status < 300) {
    return std::move(resp.body);
  }
  const auto env = parse_error(resp.body);
  const std::string label = "lambda: " + std::string(what);
  if (env && env->code == "instance-operations/launch/insufficient-capacity") {
    return fail(Errc::quota, label + ": Lambda has no capacity for this instance type right now (" + env->code +
                                 "); try another region or card (`gpurent offers --provider lambda --refresh`), or later");
  }
  std::string detail;
  if (env) {
    detail = env->code + (env->message.empty() ? "" : ": " + env->message) +
             (env->suggestion.empty() ? "" : " (" + env->suggestion + ")");
  }
  Error e = http_error(label, resp, detail);
  if (env && env->code == "global/quota-exceeded") {
    e.code = Errc::quota;
  }
  return std::unexpected(std::move(e));
}

Result<std::vector<Offer>> LambdaProvider::fetch_offers()
{
  TRY_ASSIGN(std::string body, call(request("GET", "/api/v1/instance-types"), "instance types"));
  TRY_ASSIGN(auto types, parse_instance_types(body));
  return offers_from(types, "");
}

Result<std::vector<Instance>> LambdaProvider::list()
{
  TRY_ASSIGN(std::string body, call(request("GET", "/api/v1/instances"), "list instances"));
  return parse_instances(body);
}

Result<std::optional<Instance>> LambdaProvider::get(std::string_view id)
{
  auto body = call(request("GET", "/api/v1/instances/" + std::string(id)), "get instance");
  if (!body) {
    if (body.error().code == Errc::not_found) {  // 404 global/object-does-not-exist
      return std::optional<Instance>{};
    }
    if (body.error().code == Errc::invalid_input) {
      return find_listed(*this, id);  // 400 global/invalid-parameters: the list decides
    }
    return std::unexpected(body.error());
  }
  TRY_ASSIGN(Instance in, parse_instance(*body));
  return std::optional<Instance>{std::move(in)};
}

Result<std::string> LambdaProvider::ensure_ssh_key(std::string_view public_key)
{
  TRY_ASSIGN(std::string body, call(request("GET", "/api/v1/ssh-keys"), "list ssh keys"));
  TRY_ASSIGN(auto keys, parse_ssh_keys(body));
  const std::string wanted = public_key_body(public_key);
  for (const auto& k : keys) {
    if (public_key_body(k.public_key) == wanted) {
      return k.name;
    }
  }
  const std::string name = "gpurent-" + short_hash(wanted);
  TRY(call(request("POST", "/api/v1/ssh-keys", add_ssh_key_body(name, public_key)), "add ssh key"));
  return name;
}

Result<Instance> LambdaProvider::launch(const LaunchRequest& req)
{
  if (req.spot) {
    return fail(Errc::unsupported, "lambda: " + *unsupported(Feature::spot));
  }
  TRY_ASSIGN(auto existing, list());
  for (const auto& in : existing) {
    if (in.name == req.name && in.state != InstanceState::terminated && in.state != InstanceState::terminating) {
      return in;
    }
  }
  TRY_ASSIGN(std::string types_body, call(request("GET", "/api/v1/instance-types"), "instance types"));
  TRY_ASSIGN(auto types, parse_instance_types(types_body));
  const InstanceType* chosen = nullptr;
  std::string region;
  bool any_type = false;
  for (const auto& t : types) {
    if (card_of(t.gpu_description) != canonical_card_id(req.card) || t.gpus != req.gpus) {
      continue;
    }
    any_type = true;
    for (const auto& r : t.regions_with_capacity) {
      if (req.region.empty() || r == req.region) {
        chosen = &t;
        region = r;
        break;
      }
    }
    if (chosen != nullptr) {
      break;
    }
  }
  const std::string what = req.card + " x" + std::to_string(req.gpus);
  if (!any_type) {
    return fail(Errc::not_found, "lambda: no instance type offers " + what + "; see `gpurent offers --provider lambda --refresh`");
  }
  if (chosen == nullptr) {
    return fail(Errc::quota, "lambda: no region has capacity for " + what +
                                 (req.region.empty() ? "" : " in " + req.region) + " right now; try later or another card");
  }
  const MicroUsd price{chosen->price_cents_per_hour * 10'000};
  if (req.max_price_per_hour && price > *req.max_price_per_hour) {
    return fail(Errc::refused, "lambda: " + chosen->name + " costs more per hour than --max-price; raise it or pick another card");
  }
  TRY_ASSIGN(std::string key_name, ensure_ssh_key(req.ssh_public_key));
  TRY_ASSIGN(std::string body, call(request("POST", "/api/v1/instance-operations/launch",
                                            launch_body(region, chosen->name, key_name, req.name)),
                                    "launch"));
  TRY_ASSIGN(auto ids, parse_launch(body));
  if (ids.empty()) {
    return fail(Errc::invalid_input, "lambda: launch answered no instance id; check the Lambda console for '" + req.name + "'");
  }
  Instance in;
  in.id = ids.front();
  in.name = req.name;
  in.state = InstanceState::pending;
  in.raw_state = "booting";
  in.user = "ubuntu";
  in.card = req.card;
  in.gpus = req.gpus;
  in.price_per_hour = price;
  in.region = region;
  return in;
}

Result<void> LambdaProvider::stop(std::string_view)
{
  return fail(Errc::unsupported, "lambda: " + *unsupported(Feature::stop));
}

Result<void> LambdaProvider::start(std::string_view)
{
  return fail(Errc::unsupported, "lambda: " + *unsupported(Feature::start));
}

Result<void> LambdaProvider::hibernate(std::string_view)
{
  return fail(Errc::unsupported, "lambda: " + *unsupported(Feature::hibernate));
}

Result<void> LambdaProvider::terminate(std::string_view id)
{
  // One POST; a 404 (global/object-does-not-exist) comes back as Errc::not_found: "already gone",
  // to be confirmed with get().
  TRY(call(request("POST", "/api/v1/instance-operations/terminate", terminate_body(id)), "terminate"));
  return {};
}

}  // namespace gpurent::lambda
