// SPDX-License-Identifier: MIT
// Message shapes of PyTorch (CUDA, ROCm, cudaMallocAsync, CPU, MPS) and the bare runtime errors.
#include "oom/shapes.hpp"

namespace gpurent::oom_detail {
namespace {
constexpr std::size_t k_max_kept_processes = 256;

// ---- PyTorch (CUDA, HIP) -------------------------------------------------------------------

void apply_request(ParseState& s, std::size_t, const Match& m) { s.report.requested = m.fields[0].bytes; }

void apply_capacity(ParseState& s, std::size_t which, const Match& m)
{
  OomReport& r = s.report;
  r.device = static_cast<std::uint32_t>(m.fields[0].value);
  r.total = m.fields[1].bytes;
  if (which == 2) {
    r.allocated = m.fields[2].bytes;
    r.free = m.fields[3].bytes;
  } else {
    r.free = m.fields[2].bytes;
    r.format = which == 0 ? OomFormat::pytorch_2_2 : OomFormat::pytorch_2_0;
  }
}

void apply_entry(ParseState& s, std::size_t which, const Match& m)
{
  OomReport& r = s.report;
  const Field& f = m.fields[which == 0 ? 1 : 0];
  switch (which) {
  case 0:
    if (f.absurd) {
      return;  // a container's "Process p has 2^64 bytes": no information
    }
    if (r.other_processes.size() < k_max_kept_processes) {
      r.other_processes.push_back({m.fields[0].value, f.bytes});
    }
    r.other_processes_sum += f.bytes;
    ++r.other_process_count;
    return;
  case 1:
    if (f.absurd) {
      r.process_in_use_invalid = true;
    } else {
      r.process_in_use = f.bytes;
    }
    return;
  case 2: r.allowed = f.bytes; return;
  default: r.allocated = f.bytes; return;
  }
}

void apply_tail(ParseState& s, std::size_t which, const Match& m)
{
  if (which == 0) {
    s.report.private_pools = m.fields[0].bytes;
    s.report.reserved_unallocated = m.fields[2].bytes;
  } else {
    s.report.reserved_unallocated = m.fields[0].bytes;
  }
}

void apply_old_tail(ParseState& s, std::size_t which, const Match& m)
{
  OomReport& r = s.report;
  if (which == 0) {
    r.allowed = m.fields[0].bytes;
  } else if (which == 1) {
    r.format = OomFormat::pytorch_1x;
    r.reserved_total = m.fields[0].bytes;
    r.reserved_unallocated = m.fields[0].bytes - r.allocated.value_or(Bytes{});
  } else {
    r.format = OomFormat::pytorch_legacy;
    r.reserved_unallocated = m.fields[0].bytes;
  }
}

void apply_sampler(ParseState& s, std::size_t which, const Match& m)
{
  if (which != 1) {
    return;
  }
  s.report.max_num_seqs = m.fields[0].value;
  s.report.context = OomContext::vllm;  // vLLM v1 re-raises its sampler warm-up failure so
}

constexpr std::array<Step, 7> k_pytorch{{
    /* 0 */ {Alts{"CUDAoutofmemory", "HIPoutofmemory"}, nullptr, all(1), k_end},
    /* 1 */ {Alts{".", "occurredwhenwarmingupsamplerwith{n}dummyrequests"}, apply_sampler, Next{2, k_end}, 2},
    /* 2 */ {Alts{"Triedtoallocate{s}"}, apply_request, all(3), k_end},
    /* 3 */
    {Alts{".GPU{i}hasatotalcapacityof{s}ofwhich{s}isfree.", ".GPU{i}hasatotalcapactyof{s}ofwhich{s}isfree.",
          "(GPU{i};{s}totalcapacity;{s}alreadyallocated;{s}free;"},
     apply_capacity, Next{4, 4, 6}, k_end},
    /* 4 */
    {Alts{"Process{i}has{z}memoryinuse.", "Includingnon-PyTorchmemory,thisprocesshas{z}memoryinuse.", "{s}allowed;",
          "Oftheallocatedmemory{s}isallocatedbyPyTorch,"},
     apply_entry, Next{4, 4, 4, 5}, k_end},
    /* 5 */
    {Alts{"with{s}allocatedinprivatepools(e.g.,{w}),and{s}isreservedbyPyTorchbutunallocated",
          "and{s}isreservedbyPyTorchbutunallocated"},
     apply_tail, all(k_end), k_end},
    /* 6 */ {Alts{"{s}allowed;", "{s}reservedintotalbyPyTorch", "{s}cached"}, apply_old_tail, Next{6, k_end, k_end}, k_end},
}};

// ---- PyTorch with the cudaMallocAsync backend -----------------------------------------------

void apply_async(ParseState& s, std::size_t, const Match& m)
{
  OomReport& r = s.report;
  r.format = OomFormat::pytorch_async;
  r.device = static_cast<std::uint32_t>(m.fields[0].value);
  r.allocated = m.fields[1].bytes;
  r.requested = m.fields[2].bytes;
  r.total = m.fields[3].bytes;
  r.free = m.fields[4].bytes;
}

void apply_async_limit(ParseState& s, std::size_t, const Match& m)
{
  // Unset, the limit prints as 2^64 bytes; set with set_per_process_memory_fraction, below the card.
  if (!m.fields[0].absurd && s.report.total && m.fields[0].bytes < *s.report.total) {
    s.report.allowed = m.fields[0].bytes;
  }
}

constexpr std::array<Step, 2> k_pytorch_async{{
    {Alts{"Allocationondevice{i}wouldexceedallowedmemory.(outofmemory)Currentlyallocated:{s}Requested:{s}Devicelimit:{s}Free("
          "accordingtoCUDA):{s}"},
     apply_async, all(1), k_end},
    {Alts{"PyTorchlimit(setbyuser-suppliedmemoryfraction):{z}"}, apply_async_limit, all(k_end), k_end},
}};

// ---- PyTorch on the CPU ----

constexpr std::array<Step, 1> k_pytorch_cpu{{
    {Alts{"notenoughmemory:youtriedtoallocate{b}bytes", "can'tallocatememory:youtriedtoallocate{b}bytes"}, apply_request, all(k_end),
     k_end},
}};

// ---- PyTorch on MPS ------------------------------------------------------------------------

void apply_mps(ParseState& s, std::size_t, const Match& m)
{
  s.report.allocated = m.fields[0].bytes;
  s.report.other_allocations = m.fields[1].bytes;
  s.report.max_allowed = m.fields[2].bytes;
}

void apply_mps_request(ParseState& s, std::size_t which, const Match& m)
{
  s.report.requested = m.fields[0].bytes;
  s.report.pool = which == 0 ? "private" : which == 1 ? "shared" : "";
}

constexpr std::array<Step, 2> k_mps{{
    {Alts{"MPSbackendoutofmemory(MPSallocated:{s},otherallocations:{s},maxallowed:{s})"}, apply_mps, all(1), k_end},
    {Alts{".Triedtoallocate{s}onprivatepool", ".Triedtoallocate{s}onsharedpool", ".Triedtoallocate{s}"}, apply_mps_request,
     all(k_end), k_end},
}};

// ---- CUDA / HIP runtime --------------------------------------------------------------------

void apply_device(ParseState& s, std::size_t, const Match& m) { s.report.device = static_cast<std::uint32_t>(m.fields[0].value); }

// llama.cpp's CUDA_CHECK prints "CUDA error: out of memory\n  current device: 0, in function ...".
constexpr std::array<Step, 1> k_runtime{{
    {Alts{"currentdevice:{i}"}, apply_device, all(k_end), k_end},
}};

}  // namespace

const Step* pytorch_steps(Anchor a) noexcept
{
  switch (a) {
  case Anchor::cuda_oom:
  case Anchor::hip_oom:
  case Anchor::tried: return k_pytorch.data();
  case Anchor::cuda_async: return k_pytorch_async.data();
  case Anchor::cpu_allocator: return k_pytorch_cpu.data();
  case Anchor::mps: return k_mps.data();
  case Anchor::cuda_runtime:
  case Anchor::cuda_driver:
  case Anchor::hip_runtime: return k_runtime.data();
  default: return nullptr;
  }
}

}  // namespace gpurent::oom_detail
