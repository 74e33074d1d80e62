// SPDX-License-Identifier: MIT
#pragma once
// How commands that take a MODEL (plan, fits, up --from-plan) resolve it: the environment's
// HF_ENDPOINT, HF_TOKEN and cache directory, read from Services::env (never getenv).
#include "providers/hf_hub.hpp"

namespace gpurent {

struct Services;

// endpoint = $HF_ENDPOINT (default https://huggingface.co, trailing '/' dropped);
// token = $HF_TOKEN (or $HUGGING_FACE_HUB_TOKEN); cache = $XDG_CACHE_HOME/gpurent/hf, else
// $HOME/.cache/gpurent/hf, else no cache.
[[nodiscard]] ResolveOptions resolve_options_from(const Services& s, bool offline);

}  // namespace gpurent
