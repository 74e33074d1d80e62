// SPDX-License-Identifier: MIT
#pragma once
// How commands that take a MODEL (plan, fits, up --from-plan) resolve it: the Hub's endpoint and
// token from the configuration (hf_endpoint, hf_token: their environment variables win over the
// file, as for every key), the cache directory from Services::env (never getenv).
#include "providers/hf_hub.hpp"

namespace gpurent {

struct Config;
struct Services;

// endpoint = hf_endpoint ($GPURENT_HF_ENDPOINT, else $HF_ENDPOINT, else the file, else
// https://huggingface.co; trailing '/' dropped); token = hf_token ($GPURENT_HF_TOKEN, else
// $HF_TOKEN, else the file), else $HUGGING_FACE_HUB_TOKEN; cache = $XDG_CACHE_HOME/gpurent/hf,
// else $HOME/.cache/gpurent/hf, else no cache.
[[nodiscard]] ResolveOptions resolve_options_from(const Services& s, const Config& cfg, bool offline);

// The HTTP client for the Hub, given only when a fetch needs it: with a token, the endpoint must
// be https or plain http to this machine (cli/credential_guard.hpp), checked once.
[[nodiscard]] HttpProvider hub_http(Services& s, const Config& cfg, const ResolveOptions& o);

}  // namespace gpurent
