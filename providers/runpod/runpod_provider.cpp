// SPDX-License-Identifier: MIT
#include "providers/runpod/runpod_provider.hpp"

#include <utility>

#include "providers/runpod/runpod_api.hpp"
#include "providers/card.hpp"

namespace gpurent::runpod {

RunpodProvider::RunpodProvider(HttpClient& http, std::string base_url, std::string graphql_url, std::string api_key)
    : m_http(http), m_base(std::move(base_url)), m_graphql(std::move(graphql_url)), m_key(std::move(api_key))
{
  while (!m_base.empty() && m_base.back() == '/') {
    m_base.pop_back();
  }
}

std::optional<std::string> RunpodProvider::unsupported(Feature f) const
{
  if (f == Feature::hibernate) {
    return "runpod has no hibernate state; stop keeps the volume disk (billed at $0.20/GB-month while stopped)";
  }
  return std::nullopt;
}

HttpRequest RunpodProvider::request(std::string method, std::string url, std::string body) const
{
  HttpRequest r;
  r.method = std::move(method);
  r.url = std::move(url);
  r.headers = {{"Authorization", "Bearer " + m_key}, {"Accept", "application/json"}};
  if (!body.empty()) {
    r.headers.emplace_back("Content-Type", "application/json");
  }
  r.body = std::move(body);
  return r;
}

Result<HttpResponse> RunpodProvider::call(const HttpRequest& req, std::string_view what)
{
  TRY_ASSIGN(HttpResponse resp, m_http.send(req));
  if (resp.status >= 200 && resp.status < 300) {
    return resp;
  }
  return std::unexpected(http_error("runpod: " + std::string(what), resp, error_detail(resp.body)));
}

Result<std::vector<Offer>> RunpodProvider::fetch_offers()
{
  TRY_ASSIGN(HttpResponse resp, call(request("POST", m_graphql, gpu_types_body()), "gpu types"));
  return parse_gpu_types(resp.body);
}

Result<std::vector<Instance>> RunpodProvider::list()
{
  TRY_ASSIGN(HttpResponse resp, call(request("GET", m_base + "/pods"), "list pods"));
  return parse_pods(resp.body);
}

Result<std::optional<Instance>> RunpodProvider::get(std::string_view id)
{
  auto resp = call(request("GET", m_base + "/pods/" + std::string(id)), "get pod");
  if (!resp) {
    if (resp.error().code == Errc::not_found) {  // 404 "Pod not found."
      return std::optional<Instance>{};
    }
    if (resp.error().code == Errc::invalid_input) {
      return find_listed(*this, id);  // 400 "Invalid ID supplied.": the list decides
    }
    return std::unexpected(resp.error());
  }
  TRY_ASSIGN(Instance in, parse_pod(resp->body));
  return std::optional<Instance>{std::move(in)};
}

Result<Instance> RunpodProvider::launch(const LaunchRequest& req)
{
  TRY_ASSIGN(auto pods, list());
  for (const auto& p : pods) {
    if (p.name == req.name && p.state != InstanceState::terminated) {
      return p;
    }
  }
  const auto types = gpu_type_ids(canonical_card_id(req.card));
  if (types.empty()) {
    return fail(Errc::not_found, "runpod: no RunPod GPU type is known for card " + req.card +
                                     "; see `gpurent offers --provider runpod`");
  }
  CreatePod c{req.name, req.image.empty() ? std::string(k_default_image) : req.image, types, req.gpus, req.spot,
              req.ssh_public_key};
  TRY_ASSIGN(HttpResponse resp, call(request("POST", m_base + "/pods", create_body(c)), "create pod"));
  TRY_ASSIGN(Instance in, parse_pod(resp.body));
  // RunPod picks the machine, so its price is known only now: the caller checks --max-price
  // against in.price_per_hour and destroys the pod (confirmed, recorded) when it is over.
  if (in.name.empty()) {
    in.name = req.name;
  }
  return in;
}

Result<void> RunpodProvider::stop(std::string_view id)
{
  TRY(call(request("POST", m_base + "/pods/" + std::string(id) + "/stop"), "stop pod"));
  return {};
}

Result<void> RunpodProvider::start(std::string_view id)
{
  TRY(call(request("POST", m_base + "/pods/" + std::string(id) + "/start"), "start pod"));
  return {};
}

Result<void> RunpodProvider::hibernate(std::string_view)
{
  return fail(Errc::unsupported, "runpod: " + *unsupported(Feature::hibernate));
}

Result<void> RunpodProvider::terminate(std::string_view id)
{
  // DELETE /pods/{podId} documents 204, 400 "Invalid Pod ID." and 401. A 400 (or a 404) is what a
  // pod that no longer exists gets: Errc::not_found, "already gone", confirmed later with get().
  auto r = call(request("DELETE", m_base + "/pods/" + std::string(id)), "terminate pod");
  if (!r && r.error().code == Errc::invalid_input) {
    return fail(Errc::not_found, r.error().message);
  }
  TRY(r);
  return {};
}

}  // namespace gpurent::runpod
