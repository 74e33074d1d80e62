// SPDX-License-Identifier: MIT
#pragma once
// Serving without --engine: the same job planned on each batching server (vLLM, SGLang,
// TensorRT-LLM) under the same request, so that the plan can say which serves the job for less.
// The plan's choice stays on its default engine (cli.md: serving keeps vLLM as the default); the
// others are shown beside it, and a note names one that delivers clearly more per dollar.
#include <optional>
#include <string>
#include <vector>

#include "planner/job_request.hpp"
#include "planner/plan.hpp"
#include "planner/plan_report.hpp"

namespace gpurent {

// Whether plan compares engines for this request and job: --task serve, no --engine, no GGUF file,
// on the default serving engine.
[[nodiscard]] bool compares_engines(const PlanOptions& o, const JobSpec& job) noexcept;

// Each batching engine's best option for the job `o` describes, ranked under `request` (the one the
// plan ranked its own engine under); `chosen` is the plan's own result (its engine's entry is taken
// from it, not ranked again).
[[nodiscard]] std::vector<EngineOption> compare_engines(const PlanOptions& o, const PlanRequest& request,
                                                        const ModelArch& arch, const Catalogues& catalogues,
                                                        const PlanResult& chosen);

// How much more an engine's best option delivers than the chosen engine's: output tokens per
// dollar (unsized), or the inverse ratio of the job's bill (sized); absent when either is unknown.
[[nodiscard]] std::optional<double> delivery_ratio(const PlanOption& other, const PlanOption& chosen) noexcept;

// The note when another engine delivers at least 10% more per dollar than the chosen one.
[[nodiscard]] std::optional<std::string> engine_note(const std::vector<EngineOption>& engines);

}  // namespace gpurent
