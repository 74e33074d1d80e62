#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes public_v2.json: the verbatim messages below (each from the public thread named with it)
# and what `gpurent oom` must read and conclude from them, computed here, independently of the
# C++, with the arithmetic of spec/oom.md (GiB = 2^30, 6 decimals). Run it after editing.
import json, math, os, re, sys

M = []
def add(id, source, message, **facts):
    M.append(dict(id=id, source=source, message=message, facts=facts))

# ---- PyTorch on Apple MPS
add("comfyui7440", "https://github.com/Comfy-Org/ComfyUI/issues/7440",
"MPS backend out of memory (MPS allocated: 9.57 GiB, other allocations: 17.35 GiB, max allowed: 27.20 GiB). Tried to allocate 292.50 MiB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).",
kind="mps", A="9.57 GiB", O="17.35 GiB", M="27.20 GiB", R="292.50 MiB")
add("comfyui7372", "https://github.com/Comfy-Org/ComfyUI/issues/7372",
"### Your question\n\nMPS backend out of memory (MPS allocated: 17.68 GB, other allocations: 3.95 MB, max allowed: 18.13 GB). Tried to allocate 1024.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).\n\nI have never experienced this problem before after updating comfyUI. Is there a solution?",
kind="mps", A="17.68 GB", O="3.95 MB", M="18.13 GB", R="1024.00 MB")
add("surya254", "https://github.com/datalab-to/surya/issues/254",
" attn_output = torch.nn.functional.scaled_dot_product_attention(\nRuntimeError: MPS backend out of memory (MPS allocated: 7.23 GB, other allocations: 1.54 GB, max allowed: 9.07 GB). Tried to allocate 896.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).",
kind="mps", A="7.23 GB", O="1.54 GB", M="9.07 GB", R="896.00 MB")
add("pinokio941", "https://github.com/pinokiocomputer/pinokio/issues/941",
"I've installed hunyuan3d-2-lowvram and now when I try to generate somehting I get an error :\nMPS backend out of memory (MPS allocated: 16.00 GB, other allocations: 3.31 GB, max allowed: 18.13 GB). Tried to allocate 256 bytes on shared pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).",
kind="mps", A="16.00 GB", O="3.31 GB", M="18.13 GB", R="256 bytes", pool="shared")
add("rlswarm341", "https://github.com/gensyn-ai/rl-swarm/issues/341",
"RuntimeError: MPS backend out of memory (MPS allocated: 15.05 GB, other allocations: 11.91 GB, max allowed: 27.20 GB). Tried to allocate 1.16 GB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).\n>> An error was detected while running rl-swarm. See /users/mengqf-202506/gensy/rl-swarm/logs for full logs.\n>> Shutting down trainer...\nzsh: terminated  ./run_rl_swarm.sh",
kind="mps", A="15.05 GB", O="11.91 GB", M="27.20 GB", R="1.16 GB")
add("clipinterrogator74", "https://github.com/pharmapsychotic/clip-interrogator-ext/issues/74",
"MPS backend out of memory (MPS allocated: 6.04 GB, other allocations: 1.04 GB, max allowed: 6.77 GB). Tried to allocate 459.07 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure)",
kind="mps", A="6.04 GB", O="1.04 GB", M="6.77 GB", R="459.07 MB")
add("comfyui2489", "https://github.com/Comfy-Org/ComfyUI/issues/2489",
"RuntimeError: MPS backend out of memory (MPS allocated: 5.56 GB, other allocations: 1.10 GB, max allowed: 6.80 GB). Tried to allocate 768.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0",
kind="mps", A="5.56 GB", O="1.10 GB", M="6.80 GB", R="768.00 MB")

# ---- bare CUDA runtime
add("iim28", "https://github.com/taohan10200/IIM/issues/28",
"RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
kind="runtime")
add("comfyui12366", "https://github.com/Comfy-Org/ComfyUI/issues/12366",
"CUDA error: out of memorySearch for `cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/cuda-runtimAe-api/group__CUDRT__TYPES.html for more information.CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.For debugging consider passing",
kind="runtime")
add("wan2gp1083", "https://github.com/deepbeepmeep/Wan2GP/issues/1083",
"  File \"C:\\Users\\dwoo\\Desktop\\Wan2GP\\wan2gp\\python_embeded\\lib\\site-packages\\torch\\nn\\functional.py\", line 2905, in layer_norm\n    return torch.layer_norm(\ntorch.AcceleratorError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"C:\\Users\\dwoo\\Desktop\\Wan2GP\\wan2gp\\wgp.py\", line 6020, in generate_video_error_handler\n    generate_video(task, send_cmd, plugin_data=plugin_data,  **params)",
kind="runtime")
add("cupy314", "https://github.com/cupy/cupy/pull/314",
"    cupy.cuda.runtime.CUDARuntimeError: cudaErrorMemoryAllocation: out of memory",
kind="runtime")
add("daskcuda225", "https://github.com/rapidsai/dask-cuda/issues/225",
"    raise CudaAPIError(retcode, msg)\nnumba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY",
kind="runtime")
add("pixor31", "https://github.com/philip-huang/PIXOR/issues/31",
"failed to allocate 17.79G (19104890880 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
kind="runtime", R_bytes=19104890880)
add("lc0_927", "https://github.com/LeelaChessZero/lc0/issues/927",
"error CUDA error: out of memory (c:\\projects\\lc0\\src\\neural\\cuda\\network_cudnn.cc:442",
kind="runtime")
add("pytorch2187", "https://github.com/pytorch/pytorch/issues/2187",
"**RuntimeError: cuda runtime error (2) : out of memory at /tmp/pip-ikrnhryb-build/torch/lib/THC/generic/THCStorage.cu:66**",
kind="runtime")

# ---- PyTorch on ROCm (HIP)
add("strixhalo3", "https://github.com/kyuz0/amd-strix-halo-image-video-toolboxes/issues/3",
"    return func(*args, **kwargs)\ntorch.OutOfMemoryError: HIP out of memory. Tried to allocate 3.31 GiB. GPU 0 has a total capacity of 128.00 GiB of which 780.24 MiB is free. Of the allocated memory 57.70 GiB is allocated by PyTorch, and 75.82 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
kind="pytorch", rocm=True, format="pytorch>=2.2", R="3.31 GiB", T="128.00 GiB", F="780.24 MiB", A="57.70 GiB", U="75.82 MiB")
add("comfyui9529", "https://github.com/Comfy-Org/ComfyUI/issues/9529",
"HIP out of memory. Tried to allocate 432.00 MiB. GPU 0 has a total capacity of 15.92 GiB of which 7.12 GiB is free. Of the allocated memory 8.08 GiB is allocated by PyTorch, and 321.96 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\nThis error means you ran out of memory on your GPU.",
kind="pytorch", rocm=True, format="pytorch>=2.2", R="432.00 MiB", T="15.92 GiB", F="7.12 GiB", A="8.08 GiB", U="321.96 MiB")
add("therock2118", "https://github.com/ROCm/TheRock/issues/2118",
"2025-11-14T08:52:38.3746210Z FAILED [0.0004s] external-builds/pytorch/pytorch/test/test_autograd.py::TestAutogradDeviceTypeCUDA::test_set_requires_grad_only_for_floats_cuda_int32 - torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 287.98 GiB of which 275.86 GiB is free. 1.05 GiB allowed; Of the allocated memory 1017.01 MiB is allocated by PyTorch, with 17.00 MiB allocated in private pools (e.g., HIP Graphs), and 54.99 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
kind="pytorch", rocm=True, format="pytorch>=2.2", R="2.00 MiB", T="287.98 GiB", F="275.86 GiB", A="1017.01 MiB", U="54.99 MiB", allowed="1.05 GiB", pools="17.00 MiB")
add("therock1054", "https://github.com/ROCm/TheRock/issues/1054",
"torch.OutOfMemoryError: HIP out of memory. Tried to allocate 16.00 GiB. GPU 0 has a total capacity of 15.24 GiB of which 15.09 GiB is free. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
kind="pytorch", rocm=True, format="pytorch>=2.2", R="16.00 GiB", T="15.24 GiB", F="15.09 GiB", A="0 bytes", U="0 bytes")
add("cosyvoice1189", "https://github.com/QwenAudio/CosyVoice/issues/1189",
"torch.OutOfMemoryError: HIP out of memory. Tried to allocate 5.48 GiB. GPU 0 has a total capacity of 15.98 GiB of which 4.96 GiB is free. Of the allocated memory 10.43 GiB is allocated by PyTorch, and 240.40 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation. See documentation for Memory Management (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
kind="pytorch", rocm=True, format="pytorch>=2.2", R="5.48 GiB", T="15.98 GiB", F="4.96 GiB", A="10.43 GiB", U="240.40 MiB")
add("fluxwebui25", "https://github.com/pinokiofactory/flux-webui/issues/25",
"> initializing pipeline...\n> You set `add_prefix_space`. The tokenizer needs to be converted from the slow tokenizers\n> initialized!\n> Traceback (most recent call last):\n> (...)lots of traceback(...)\n> torch.OutOfMemoryError: HIP out of memory. Tried to allocate 80.00 MiB. GPU 0 has a total capacity of 15.98 GiB of which 84.00 MiB is free. Of the allocated memory 15.44 GiB is allocated by PyTorch, and 267.59 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
kind="pytorch", rocm=True, format="pytorch>=2.2", R="80.00 MiB", T="15.98 GiB", F="84.00 MiB", A="15.44 GiB", U="267.59 MiB")

# ---- PyTorch CUDA: free memory was enough, containers
add("pytorch59778", "https://github.com/pytorch/pytorch/issues/59778",
"`CUDA out of memory. Tried to allocate 2.26 GiB (GPU 0; 6.00 GiB total capacity; 781.59 MiB already allocated; 3.03 GiB free; 1.24 GiB reserved in total by PyTorch) `\nI am unable to understand this error. If memory is available then why is PyTorch not allocating it? :sweat_smile:",
kind="pytorch", format="pytorch-1.x", R="2.26 GiB", T="6.00 GiB", A="781.59 MiB", F="3.03 GiB", RT="1.24 GiB")
add("ootdiffusion167", "https://github.com/levihsu/OOTDiffusion/issues/167",
"when trying to python run_ootd.py i get this error: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacty of 4.00 GiB of which 2.80 GiB is free. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.",
kind="pytorch", format="pytorch-2.0", R="2.00 GiB", T="4.00 GiB", F="2.80 GiB", A="0 bytes", U="0 bytes")
add("chatglm2_556", "https://github.com/zai-org/ChatGLM2-6B/issues/556",
"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 214.00 MiB. GPU 0 has a total capacty of 22.00 GiB of which 19.50 GiB is free. Including non-PyTorch memory, this process has 17179869184.00 GiB memory in use. Of the allocated memory 1.32 GiB is allocated by PyTorch, and 1.93 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
kind="pytorch", format="pytorch-2.0", R="214.00 MiB", T="22.00 GiB", F="19.50 GiB", A="1.32 GiB", U="1.93 MiB", P_invalid=True)
add("vllm2140", "https://github.com/vllm-project/vllm/issues/2140",
"I used 2080Ti which has 22GB memory for run vllm as a server for qwen2-7b-instruct: `python -m vllm.entrypoints.openai.api_server --model /home/jovyan/qwen/Qwen2-7B-Instruct  --served-model-name Qwen2-7B-Instruct --max-model-len=512 --dtype=float --enforce-eager`\n> torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 518.00 MiB. GPU 0 has a total capacty of 21.67 GiB of which 4.06 MiB is free. Process 2417585 has 21.65 GiB memory in use. Of the allocated memory 21.32 GiB is allocated by PyTorch, and 1018.00 KiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
kind="pytorch", format="pytorch-2.0", R="518.00 MiB", T="21.67 GiB", F="4.06 MiB", A="21.32 GiB", U="1018.00 KiB", procs=[(2417585, "21.65 GiB")], context="vllm")
add("sdwebuireplacer74", "https://github.com/light-and-ray/sd-webui-replacer/issues/74",
"    torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 27.12 GiB. GPU 0 has a total capacty of 11.99 GiB of which 0 bytes is free. Of the allocated memory 16.16 GiB is allocated by PyTorch, and 144.59 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
kind="pytorch", format="pytorch-2.0", R="27.12 GiB", T="11.99 GiB", F="0 bytes", A="16.16 GiB", U="144.59 MiB")
add("vllm12529", "https://github.com/vllm-project/vllm/issues/12529",
"ERROR 03-13 09:00:43 [core.py:330] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.16 GiB. GPU 0 has a total capacity of 7.75 GiB of which 1.17 GiB is free. Including non-PyTorch memory, this process has 5.02 GiB memory in use. Of the allocated memory 4.81 GiB is allocated by PyTorch, and 18.97 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\nERROR 03-13 09:00:43 [core.py:330] \nCRITICAL 03-13 09:00:43 [core_client.py:260] Got fatal signal from worker processes, shutting down. See stack trace above for root cause issue.",
kind="pytorch", format="pytorch>=2.2", R="1.16 GiB", T="7.75 GiB", F="1.17 GiB", P="5.02 GiB", A="4.81 GiB", U="18.97 MiB", context="vllm")

# ---- vLLM
add("vllm20305", "https://github.com/vllm-project/vllm/issues/20305",
"[multiproc_executor.py:492] ValueError: Free memory on device (31.44/47.38 GiB) on startup is less than desired GPU memory utilization (0.95, 45.01 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\nERROR 06-30 13:53:19 [core.py:515] EngineCore failed to start.\nERROR 06-30 13:53:19 [core.py:515] Traceback (most recent call last):\nERROR 06-30 13:53:19 [core.py:515]   File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py\", line 506, in run_engine_core\nERROR 06-30 13:53:19 [core.py:515]     engine_core = EngineCoreProc(*args, **kwargs)",
kind="vllm_free", Fn=31.44, T="47.38 GiB", util=0.95, want="45.01 GiB")
add("pytorch175666", "https://github.com/pytorch/pytorch/issues/175666",
"[release 2.11][vllm] Distributed failures - free memory on device cuda:0 (19.77/22.05 GiB) on startup is less than desired GPU memory utilization (0.9, 19.84 GiB)",
kind="vllm_free", Fn=19.77, T="22.05 GiB", util=0.9, want="19.84 GiB", device=0)
add("vllmomni276", "https://github.com/vllm-project/vllm-omni/issues/276",
"However, vLLM immediately throws the following error:\n`ValueError: Free memory on device (0.49/79.32 GiB) on startup is less than desired GPU memory utilization (0.6, 47.59 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.`",
kind="vllm_free", Fn=0.49, T="79.32 GiB", util=0.6, want="47.59 GiB")
add("vllm23192", "https://github.com/vllm-project/vllm/issues/23192",
"(EngineCore_0 pid=1810465) ERROR 09-03 11:03:37 [core.py:712]   File \"/home/kaiwu/.conda/envs/vllm/lib/python3.12/site-packages/vllm/v1/worker/gpu_worker.py\", line 180, in init_device\n(EngineCore_0 pid=1810465) ERROR 09-03 11:03:37 [core.py:712]     raise ValueError(\n(EngineCore_0 pid=1810465) ERROR 09-03 11:03:37 [core.py:712] ValueError: Free memory on device (7.34/139.72 GiB) on startup is less than desired GPU memory utilization (0.9, 125.75 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n(EngineCore_0 pid=1810465) Process EngineCore_0:\n(EngineCore_0 pid=1810465) Traceback (most recent call last):",
kind="vllm_free", Fn=7.34, T="139.72 GiB", util=0.9, want="125.75 GiB")
add("vllm25837", "https://github.com/vllm-project/vllm/issues/25837",
"(EngineCore_DP0 pid=17374) ERROR 09-28 15:47:24 [core.py:718]     raise ValueError(\n(EngineCore_DP0 pid=17374) ERROR 09-28 15:47:24 [core.py:718] ValueError: Free memory on device (3.22/4.0 GiB) on startup is less than desired GPU memory utilization (0.9, 3.6 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n(EngineCore_DP0 pid=17374) Process EngineCore_DP0:",
kind="vllm_free", Fn=3.22, T="4.0 GiB", util=0.9, want="3.6 GiB")
add("llamafactory6472", "https://github.com/hiyouga/LlamaFactory/issues/6472",
"The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV cache (1216). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializin",
kind="vllm_len", N=4096, K=1216)

# ---- SGLang
add("sglang4330", "https://github.com/sgl-project/sglang/issues/4330",
"I am trying speculative decoding and when setting --mem-fraction-static to 0.85, I get a CUDA out of memory error. However, if I set it to 0.84, I receive the following error:\n\nRuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n\nThis creates a situation where I am stuck between these two errors, unable to find a usable memory fraction.",
kind="sglang")
add("inferencex2128", "https://github.com/SemiAnalysisAI/InferenceX/issues/2128",
"**Actual behavior / logs**\n```\nLoad weight end. quant=fp8, fmt=e4m3, avail mem=12.25 GB, mem usage=125.65 GB.\n# non-MTP:\nValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88.\n  Rai",
kind="sglang", frac=0.88, weights="125.65 GB", after="12.25 GB")
add("sglang36260", "https://github.com/sgl-project/sglang/pull/36260",
"  `test_intel_amx_attention_backend_a` / `_b` flakily fail with:\n\n  > ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.1\n\n  Passing one day, failing the next, with no relevant code change.",
kind="sglang", frac=0.1)
add("sglang_kvmixin_cn", "https://github.com/sgl-project/sglang/issues/7691",
"[2025-07-02 07:41:58 DP0 TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=21.73 GB, mem usage=166.59 GB.\n[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.\n[2025-07-02 07:41:59 DP7 TP7] max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.",
kind="none")

# ---- TGI
add("tgi755", "https://github.com/huggingface/text-generation-inference/issues/755",
"Lllama 70B chat GPTQ fails with `Error: Warmup(Generation(\"Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`\"))`",
kind="tgi", prefill=4096)
add("tgi710", "https://github.com/huggingface/text-generation-inference/issues/710",
"Not enough memory to handle 16000 total tokens with 2 prefill tokens. You need to decrease `--max-batch-total-tokens` or `--max-batch-prefill-tokens",
kind="tgi", prefill=2, total=16000)
add("tgi1164", "https://github.com/huggingface/text-generation-inference/issues/1164",
"ERROR warmup{max_input_length=64 max_prefill_tokens=256}:warmup: text_generation_client: router/client/src/lib.rs:33: Server error: Not enough memory to handle 256 prefill tokens. You need to decrease",
kind="tgi", prefill=256)
add("tgi1067", "https://github.com/huggingface/text-generation-inference/issues/1067",
"  File \"/opt/conda/lib/python3.9/site-packages/text_generation_server/models/flash_causal_lm.py\", line 755, in warmup\n    raise RuntimeError(\nRuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`\n\n2023-09-26T21:48:00.969072Z ERROR text_generation_launcher: Method Warmup encountered an error.\nTraceback (most recent call last):\n  File \"/opt/conda/lib/python3.9/site-packages/text_generation_server/models/flash_causal_lm.py\", line 753, in warmup\n    _, batch = self.generate_token(batch)",
kind="tgi", prefill=4096)

# ---- JAX / XLA
add("jax13428", "https://github.com/jax-ml/jax/issues/13428",
"    out_flat = compiled.execute(in_flat)\njaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 6291456 bytes.\nBufferAssignment OOM Debugging.\nBufferAssignment stats:\n             parameter allocation:    6.00MiB\n              constant allocation:         0B\n        maybe_live_out allocation:    6.00MiB\n     preallocated temp allocation:         0B\n                 total allocation:   12.00MiB\n              total fragmentation:         0B (0.00%)\nPeak buffers:\n        Buffer 1:\n                Size: 6.00MiB",
kind="xla", R_bytes=6291456, xla_total="12.00MiB", xla_params="6.00MiB", xla_temp="0B", xla_live="6.00MiB", xla_frag="0B")
add("afprofile8", "https://github.com/patrickbryant1/AFProfile/issues/8",
"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.\nBufferAssignment OOM Debugging.\nBufferAssignment stats:\n             parameter allocation:  372.76MiB\n              constant allocation:    48.5KiB\n        maybe_live_out allocation:    9.64GiB\n     preallocated temp allocation:    4.44GiB\n                 total allocation:   14.44GiB\n              total fragmentation:  680.30MiB (4.60%)\n\nI am running a 3080 ti GPU.",
kind="xla", R_bytes=4770354232, xla_total="14.44GiB", xla_params="372.76MiB", xla_temp="4.44GiB", xla_live="9.64GiB", xla_frag="680.30MiB")
add("alphafold1023", "https://github.com/google-deepmind/alphafold/issues/1023",
"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.\n```\nHow can I deal with this? Thank you so much!",
kind="xla", R_bytes=7406166528)
add("jax788", "https://github.com/jax-ml/jax/issues/788",
"[1] 2019-06-13 01:17:08.886805: E external/org_tensorflow/tensorflow/compiler/xla/python/local_client.cc:672] Execution of replica 0 failed: Resource exhausted: Out \nof memory while trying to allocate 5520758552 bytes.",
kind="xla", R_bytes=5520758552)
add("graphcast18", "https://github.com/ecmwf-lab/ai-models-graphcast/issues/18",
"  File \"/home/user/.local/lib/python3.10/site-packages/jax/_src/traceback_util.py\", line 179, in reraise_with_filtered_traceback\n    return fun(*args, **kwargs)\n...\njaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 2.99GiB (3206250496B) on device ordinal 0",
kind="xla", R_bytes=3206250496, device=0)
add("meshtransformerjax66", "https://github.com/kingoflolz/mesh-transformer-jax/issues/66",
"2021-07-21 16:15:16.513776: E external/org_tensorflow/tensorflow/compiler/xla/pjrt/pjrt_stream_executor_client.cc:1981] Execution of replica 0 failed: Resource exhausted: Failed to allocate request for 32.00MiB (33554432B) on device ordinal 0",
kind="xla", R_bytes=33554432, device=0)
add("lwm60", "https://github.com/LargeWorldModel/LWM/issues/60",
"    output, self.sharded_rng = self._forward_generate(\njaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 21.95G of 15.48G hbm.\n Exceeded hbm capacity by 6.47G.\n\nTotal hbm usage >= 22.47G:\n    reserved        530.00M\n    program          21.95G\n    arguments            0B",
kind="tpu", used="21.95G", cap="15.48G", space="hbm")
add("easydel78", "https://github.com/erfanzar/EasyDeL/issues/78",
"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 21.90G of 7.48G hbm. Exceeded hbm capacity by 14.42G.",
kind="tpu", used="21.90G", cap="7.48G", space="hbm")
add("vllm8318", "https://github.com/vllm-project/vllm/issues/8318",
"> RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space smem. Used 1.00M of 1.00M smem. Exceeded smem capacity by 1.7K.",
kind="tpu", used="1.00M", cap="1.00M", space="smem")

# ---- TensorFlow
add("tfmodels7142", "https://github.com/tensorflow/models/issues/7142",
"I keep getting this error that says ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[500,17,17,4032] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc.",
kind="tf", shape=[500,17,17,4032], dtype="float", size=4, device=0)
add("keras9643", "https://github.com/keras-team/keras/issues/9643",
"ResourceExhaustedError: OOM when allocating tensor with shape[128,128,109,109] and type float on /job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc\n\t [[Node: replica_1/xception/block2_sepconv1_bn/FusedBatchNorm = FusedBatchNorm[T=DT_FLOAT, data_format=\"NHWC\", epsilon=0.001, is_training=true, _device=\"/job:localhost/replica:0/task:0/device:GPU:1\"](replica_1/xception/block2_sepconv1/separable_conv2d, block2_sepconv1_bn/gamma/read/_533, block2_sepconv1_bn/beta/read/_535, replica_1/xception/block13_sepconv1_bn/Const, replica_1/xception/block13_sepconv1_bn/Const)]]",
kind="tf", shape=[128,128,109,109], dtype="float", size=4, device=1)
add("segan42", "https://github.com/santi-pdp/segan/issues/42",
"ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[100,4096,32]",
kind="tf", shape=[100,4096,32])
add("textclassification4", "https://github.com/dongjun-Lee/text-classification-models-tf/issues/4",
"`\nResourceExhaustedError (see above for traceback): OOM when allocating tensor of shape [563354,256] and type float\n\t [[Node: embeddings/Adam/Initializer/zeros = Const[dtype=DT_FLOAT, value=Tensor<type: float shape: [563354,256] values: [0 0 0]...>, _device=\"/job:localhost/replica:0/task:0/device:GPU:0\"]()]]\n`",
kind="tf", shape=[563354,256], dtype="float", size=4)
add("azureml880", "https://github.com/Azure/MachineLearningNotebooks/issues/880",
"ResourceExhaustedError: 2 root error(s) found.\n  (0) Resource exhausted: OOM when allocating tensor with shape[16,112,112,147] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n\t [[{{node resnet_v1_50/conv1/ExtractImagePatches}}]]\nHint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to RunOptions for current allocation info.",
kind="tf", shape=[16,112,112,147], dtype="float", size=4, device=0)

# ---- NCCL
add("nccl1235", "https://github.com/NVIDIA/nccl/issues/1235",
"ng30903:3063025:3066031 [0] NCCL INFO group.cc:96 -> 3\n\nng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n\nng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes\nng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:204 -> 1\nng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:605 -> 1",
kind="nccl", device=3, R_bytes=6291456)
add("opensora386", "https://github.com/PKU-YuanGroup/Open-Sora-Plan/issues/386",
"ins-7df6eojsifuykig9:3018452:3024012 [1] NCCL INFO Channel 01 : 1[1030] -> 0[1020] via SHM/direct/direct\n\nins-7df6eojsifuykig9:3018451:3018451 [0] enqueue.cc:1085 NCCL WARN Cuda failure 'out of memory'",
kind="nccl", device=0)
add("trtllm1670", "https://github.com/NVIDIA/TensorRT-LLM/issues/1670",
"VM-0-16-ubuntu:392:494 [2] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'\n\nVM-0-16-ubuntu:392:494 [2] enqueue.cc:54 NCCL WARN Cuda failure 'invalid resource handle'\n\nVM-0-16-ubuntu:392:494 [2] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'",
kind="nccl", device=2)

# ---- Ollama host memory
add("easyrag9", "https://github.com/yuntianhe2014/Easy-RAG/issues/9",
"ValueError: Ollama call failed with status code 500. Details: {\"error\":\"model requires more system memory (3.7 GiB) than is available (3.6 GiB)\"}",
kind="host", R="3.7 GiB", F="3.6 GiB")
add("ollama10920", "https://github.com/ollama/ollama/issues/10920",
"writing manifest \nsuccess \nError: model requires more system memory (164.8 GiB) than is available (13.4 GiB)\nroot@orion-o6:/home/radxa# ollama list",
kind="host", R="164.8 GiB", F="13.4 GiB")
add("ollama13556", "https://github.com/ollama/ollama/issues/13556",
"Successfully run `llama3.3` only for the first time. Subsequent run hits `ollama._types.ResponseError: model requires more system memory (39.4 GiB) than is available (30.0 GiB) (status code: 500)`",
kind="host", R="39.4 GiB", F="30.0 GiB")
add("continue11715", "https://github.com/continuedev/continue/issues/11715",
"**Error Output**\n```\n\"model requires more system memory (5.0 GiB) than is available (3.9 GiB)\"\n```",
kind="host", R="5.0 GiB", F="3.9 GiB")

# ---- llama.cpp / Ollama device buffers
add("ikllama235", "https://github.com/ikawrakow/ik_llama.cpp/pull/235",
"llama_new_context_with_model: KV self size  = 2196.00 MiB, c^KV (f16): 2196.00 MiB, kv^T: not used\nllama_new_context_with_model:  CUDA_Host  output buffer size =     0.99 MiB\nllama_new_context_with_model: pipeline parallelism enabled (n_copies=4)\nggml_backend_cuda_buffer_type_alloc_buffer: allocating 8900.01 MiB on device 0: cudaMalloc failed: out of memory\nggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 9332334592\nllama_new_context_with_model: failed to allocate compute buffers\nllama_init_from_gpt_params: error: failed to create context with model '/models/gghfez_DeepSeek-R1-11446-Q2_K/DeepSeek-R1-11446-Q2_K-00001-of-00030.gguf'",
kind="llama", R="8900.01 MiB", device=0, stage="compute", engine="llama.cpp")
add("llamacpp11476", "https://github.com/ggml-org/llama.cpp/issues/11476",
"deep-seek-1  | llama_kv_cache_update_impl: failed to allocate compute buffers\ndeep-seek-1  | ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc failed: out of memory\ndeep-seek-1  | ggml_gallocr_reserve_n: failed to allocate CUDA1 buffer of size 10345253120\ndeep-seek-1  | llama_kv_cache_update_impl: failed to allocate compute buffers\ndeep-seek-1  | ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc failed: out of memory\ndeep-seek-1  | ggml_gallocr_reserve_n: failed to allocate CUDA1 buffer of size 10345253120\ndeep-seek-1  | llama_kv_cache_update_impl: failed to allocate compute buffers",
kind="llama", R="9866.00 MiB", device=1, stage="compute", engine="llama.cpp")
add("llamacpp26297", "https://github.com/ggml-org/llama.cpp/pull/26297",
"1.06.520.077 E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 51748.72 MiB on device 1: cudaMalloc failed: out of memory\n1.06.520.084 E ggml_gallocr_reserve_n_impl: failed to allocate CUDA1 buffer of size 54262464512\n1.06.520.086 E graph_reserve: failed to allocate compute buffers\n1.06.520.107 W sched_reserve: compute buffer allocation failed, retrying without pipeline parallelism",
kind="llama", R="51748.72 MiB", device=1, stage="compute", engine="llama.cpp")
add("ollama11733", "https://github.com/ollama/ollama/issues/11733",
"Error: 500 Internal Server Error: llama runner process has terminated: error:failed to allocate buffer, size = 33074.89 MiB\nggml_gallocr_reserve_n: failed to allocate Metal buffer of size 34681522080",
kind="llama", R_bytes=34681522080, engine="ollama", memory="unified", backend="Metal")
add("ollama12634", "https://github.com/ollama/ollama/issues/12634",
"load_tensors: loading model tensors, this can take a while... (mmap = false)\nggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 437944320\nalloc_tensor_range: failed to allocate CPU buffer of size 437944320\nllama_model_load: error loading model: unable to allocate CPU buffer\nllama_model_load_from_file_impl: failed to load model\npanic: unable to load model: D:\\Ollama_Models\\blobs\\sha256-ac9bc7a69dab38da1c790838955f1293420b55ab555ef6b4615efa1c1507b1ed\n\ngoroutine 40 [running]:\ngithub.com/ollama/ollama/runner/llamarunner.(*Server).loadModel(0xc00009be00, {0x31, 0x0, 0x0, {0xc00038ae54",
kind="llama", R_bytes=437944320, engine="ollama", memory="host", backend="CPU", stage="weights")
add("ollama9260", "https://github.com/ollama/ollama/issues/9260",
"Feb 21 01:41:02 paibo ollama[402476]: ggml_backend_cuda_buffer_type_alloc_buffer: allocating 81656.95 MiB on device 0: cudaMalloc failed: out of memory\nFeb 21 01:41:16 paibo ollama[402476]: llama_model_load: error loading model: unable to allocate CUDA0 buffer\nFeb 21 01:41:16 paibo ollama[402476]: llama_load_model_from_file: failed to load model\nFeb 21 01:41:16 paibo ollama[402476]: panic: unable to load model: /usr/share/ollama/.ollama/models/blobs/sha256-b74fcbabbb0836b765a011150b96e24ff3937bc46ee4a820e88877893dbe9a63",
kind="llama", R="81656.95 MiB", device=0, engine="ollama", stage="weights")
add("ollama11359", "https://github.com/ollama/ollama/issues/11359",
"Ollama call failed with status code 500: llama runner process has terminated: error loading model: unable to allocate CUDA0 buffer",
kind="llama", device=0, engine="ollama", stage="weights", backend="CUDA0")
add("ollama10784", "https://github.com/ollama/ollama/issues/10784",
"error loading model: unable to allocate ROCm0 buffer",
kind="llama", device=0, stage="weights", backend="ROCm0", rocm=True)

# ---- PyTorch's cudaMallocAsync backend (ComfyUI's default)
add("joycaption28", "https://github.com/EvilBT/ComfyUI_SLK_joy_caption_two/issues/28",
"Allocation on device 0 would exceed allowed memory. (out of memory)\nCurrently allocated : 15.16 GiB\nRequested : 512.00 KiB\nDevice limit : 15.99 GiB\nFree (according to CUDA): 0 bytes\nPyTorch limit (set by user-supplied memory fraction)\n: 17179869184.00 GiB",
kind="async", A="15.16 GiB", R="512.00 KiB", T="15.99 GiB", F="0 bytes")
add("animatediff320", "https://github.com/continue-revolution/sd-webui-animatediff/issues/320",
"OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory) Currently allocated : 12.20 GiB Requested : 1.88 GiB Device limit : 16.00 GiB Free (according to CUDA): 0 bytes PyTorch limit (set by user-supplied memory fraction) : 17179869184.00 GiB",
kind="async", A="12.20 GiB", R="1.88 GiB", T="16.00 GiB", F="0 bytes")
add("comfyuichattts9", "https://github.com/AIFSH/ComfyUI-ChatTTS/issues/9",
"torch.cuda.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\nCurrently allocated     : 6.89 GiB\nRequested               : 320.00 MiB\nDevice limit            : 23.69 GiB\nFree (according to CUDA): 2.94 MiB\nPyTorch limit (set by user-supplied memory fraction)\n                        : 17179869184.00 GiB\n2024-06-22 15:13:25,079- root:124- INFO- Prompt executed in 57.84 seconds",
kind="async", A="6.89 GiB", R="320.00 MiB", T="23.69 GiB", F="2.94 MiB")
add("comfyui5886", "https://github.com/Comfy-Org/ComfyUI/issues/5886",
"**CheckpointLoaderSimple\nAllocation on device 0 would exceed allowed memory. (out of memory)\nCurrently allocated : 5.96 GiB\nRequested : 12.50 MiB\nDevice limit : 12.00 GiB\nFree (according to CUDA): 5.00 GiB\nPyTorch limit (set by user-supplied memory fraction)\n: 17179869184.00 GiB**",
kind="async", A="5.96 GiB", R="12.50 MiB", T="12.00 GiB", F="5.00 GiB")
add("tgi563", "https://github.com/huggingface/text-generation-inference/issues/563",
"thread 'main' panicked at 'Unable to warmup model: Generation(\"Allocation on device 0 would exceed allowed memory. (out of memory)\\nCurrently allocated     : 16.08 GiB\\nRequested               : 4.83 GiB\\nDevice limit            : 22.20 GiB\\nFree (according to CUDA): 11.12 MiB\\nPyTorch limit (set by user-supplied memory fraction)\\n                        : 22.20 GiB\")', router/src/main.rs:216:18\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n2023-07-07T17:55:43.805488Z ERROR text_generation_launcher: Webserver Crashed",
kind="async", A="16.08 GiB", R="4.83 GiB", T="22.20 GiB", F="11.12 MiB", context="tgi")

# ---- more vLLM: the job in a container, the sampler warm-up
add("vllm15105", "https://github.com/vllm-project/vllm/issues/15105",
"(VllmWorker rank=1 pid=2978) ERROR 03-19 07:27:53 [multiproc_executor.py:375] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.74 GiB. GPU 1 has a total capacity of 23.57 GiB of which 605.88 MiB is free. Process 133288 has 22.97 GiB memory in use. Of the allocated memory 20.21 GiB is allocated by PyTorch, with 128.00 MiB allocated in private pools (e.g., CUDA Graphs), and 185.98 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n(VllmWorker rank=0 pid=2961) ERROR 03-19 07:27:53 [multiproc_executor.py:375] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.74 GiB. GPU 0 has a total capacity of 23.57 GiB of which 594.88 MiB is free. Process 133267 has 22.97 GiB memory in use. Of the allocated memory 20.21 GiB is allocated by PyTorch, with 128.00 MiB allocated in private pools (e.g., CUDA Graphs), and 185.98 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/",
kind="pytorch", format="pytorch>=2.2", R="1.74 GiB", T="23.57 GiB", F="594.88 MiB", A="20.21 GiB", U="185.98 MiB", procs=[(133267, "22.97 GiB")], context="vllm")
add("vllm14452", "https://github.com/vllm-project/vllm/issues/14452",
"(VllmWorker rank=7 pid=10948) ERROR 03-16 06:12:38 [multiproc_executor.py:375] RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.\n(VllmWorker rank=0 pid=10672) ERROR 03-16 06:12:38 [multiproc_executor.py:375]     raise RuntimeError(\n(VllmWorker rank=0 pid=10672) ERROR 03-16 06:12:38 [multiproc_executor.py:375] RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.",
kind="sampler", seqs=1024)

# ---- more XLA
add("octo22", "https://github.com/octo-models/octo/issues/22",
"`jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to allocate 98697216 bytes for new constant\n`",
kind="xla", R_bytes=98697216)
add("jaxprivacy10", "https://github.com/google-deepmind/jax_privacy/issues/10",
"Original error: RESOURCE_EXHAUSTED: Failed to allocate request for 176.00MiB (184549376B) on device ordinal 0",
kind="xla", R_bytes=184549376, device=0)
add("sleap2001", "https://github.com/talmolab/sleap/issues/2001",
"2024-10-22 09:22:17.233584: W .\\tensorflow/core/common_runtime/device/device_host_allocator.h:46] could not allocate pinned host memory of size: 34359738368\n2024-10-22 09:22:17.233972: E tensorflow/stream_executor/cuda/cuda_driver.cc:802] failed to alloc 34359738368 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
kind="pinned", R_bytes=34359738368)
add("jax17217", "https://github.com/jax-ml/jax/issues/17217",
"\"cudaErrorMemoryAllocation : out of memory\" when more than one program involving JAX and cuDNN",
kind="runtime")

# ---- llama.cpp on Vulkan
add("llamacpp15256", "https://github.com/ggml-org/llama.cpp/issues/15256",
"ggml_vulkan: Device memory allocation of size 118497280 failed.\nggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\ndouble free or corruption (out)",
kind="llama", R_bytes=118497280, backend="Vulkan")
add("iklama1289", "https://github.com/ikawrakow/ik_llama.cpp/issues/1289",
"Bug: Device memory allocation of size 17368219904 failed.",
kind="llama", R_bytes=17368219904, backend="Vulkan")

# ---- PyTorch on the CPU (system RAM)
add("fooocus237", "https://github.com/lllyasviel/Fooocus/issues/237",
"RuntimeError: [enforce fail at ..\\c10\\core\\impl\\alloc_cpu.cpp:72] data. DefaultCPUAllocator: not enough memory: you tried to allocate 26214400 bytes. form the run.bat",
kind="cpu", R_bytes=26214400)
add("mxfold2_20", "https://github.com/mxfold/mxfold2/issues/20",
"RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 132426121216 bytes. Error code 12 (Cannot allocate memory)",
kind="cpu", R_bytes=132426121216)
add("androiddemo114", "https://github.com/pytorch/android-demo-app/issues/114",
"`RuntimeError: [enforce fail at CPUAllocator.cpp:73] data. DefaultCPUAllocator: not enough memory: you tried to allocate 473909280 bytes. Buy new RAM!`",
kind="cpu", R_bytes=473909280)


# ---- Unsloth
# A PyTorch report inside Unsloth (its banner before transformers' and accelerate's frames): the
# stored copy of the thread ends the message at "Of th", before "Of the allocated memory": no A, so
# neither the need nor a cause; the one listed process holds what the card has in use (this job).
add("unsloth465", "https://github.com/unslothai/unsloth/issues/465",
"==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1\n   \\\\   /|    Num examples = 102 | Num Epochs = 5\nO^O/ \\_/ \\    Batch size per device = 2 | Gradient Accumulation steps = 4\n\\        /    Total batch size = 8 | Total steps = 60\n \"-____-\"     Number of trainable parameters = 41,943,040\n---------------------------------------------------------------------------\nOutOfMemoryError                          Traceback (most recent call last)\n[<ipython-input-7-3d62c575fcfd>](https://localhost:8080/#) in <cell line: 1>()\n----> 1 trainer_stats = trainer.train()\n\n13 frames\n[/usr/local/lib/python3.10/dist-packages/accelerate/utils/operations.py](https://localhost:8080/#) in _convert_to_fp32(tensor)\n    779 \n    780     def _convert_to_fp32(tensor):\n--> 781         return tensor.float()\n    782 \n    783     def _is_fp16_bf16_tensor(tensor):\n\nOutOfMemoryError: CUDA out of memory. Tried to allocate 9.47 GiB. GPU 0 has a total capacity of 14.75 GiB of which 3.78 GiB is free. Process 2116 has 10.95 GiB memory in use. Of th",
kind="unsloth_train", R="9.47 GiB", T="14.75 GiB", F="3.78 GiB", procs=[(2116, "10.95 GiB")])
# Unsloth Studio's own message for a GGUF whose rest would run from system RAM (its "GB" read as
# GiB, as every engine's here): what would run from RAM, the RAM available, what is usable of it.
add("unsloth9482", "https://github.com/unslothai/unsloth/issues/9482",
"Failed to load model: About 10 GB of this model does not fit in GPU memory and would run from system RAM. Only about 10 GB is available and 2 GB of that is kept free for the rest of the system, leaving about 8 GB usable. The weights are memory-mapped, so the machine pages them in and out until it stops responding and the OS kills the app. Use a smaller or more quantized GGUF, free memory, or set UNSLOTH_ALLOW_HOST_OFFLOAD=1 to load it anyway.",
kind="unsloth_host", R="10 GB", avail="10 GB", usable="8 GB")
add("unsloth9483", "https://github.com/unslothai/unsloth/issues/9483",
"Failed to load model: About 10 GB of this\nmodel does not fit in GPU memory and would\nrun from system RAM. Only about 8 GB is\navailable and 2 GB of that is kept free for the\nrest of the system, leaving about 6 GB usable.\nThe weights are memory-mapped, so the\nmachine pages them in and out until it stops\nresponding and the OS kills the app. Use a\nsmaller or more quantized GGUF, free memory,\nor set UNSLOTH_ALLOW_HOST_OFFLOAD=1 to\nload it anyway.",
kind="unsloth_host", R="10 GB", avail="8 GB", usable="6 GB")


# ---- TensorRT-LLM
# The PyTorch backend's executor when it cannot create a component: the card's total and what was
# free before the attempt, in GiB. 200.47 of 276.50 GiB were still free (and the reporter had
# lowered the KV fraction to 0.10): not "the weights leave nothing", so no cause is claimed, and
# the first fix asks for a smaller KV cache.
add("mlperf2501", "https://github.com/mlcommons/inference/issues/2501",
"When trying to set up the servers for GPT-OSS using run_scaleout.sh script, the following error occurs:\n\n```\nRuntimeError: Executor creation failed due to insufficient GPU memory.\n\nThe following component could not be created: KV cache\nTotal GPU memory (GiB): 276.50\nFree GPU memory before component creation attempt (GiB): 200.47\n\nPreviously created components and free GPU memory before/after creation (GiB):\nmodel: 274.64 / 208.12\nsampler: 208.12 / 204.34\n_no_capture_init_kv_cache: 204.27 / 202.40\nspec_resource_manager: 202.40 / 202.40\ndrafter: 202.40 / 202.40\n_no_capture_init_extra_resources: 202.40 / 197.99\nmodel_extra: 197.99 / 200.47\n```",
kind="trtllm_executor", component="KV cache", T=276.50, F=200.47)
# PyTorch's report inside TensorRT-LLM (its [TRT-LLM] log prefix), as stored up to the third
# listed process: no A, so no need; the listed processes (the other ranks on GPU 0) are others.
add("trtllm6281", "https://github.com/NVIDIA/TensorRT-LLM/issues/6281",
"Loading weights concurrently:  47%|████▋     | 667/1417 [00:03<00:05, 139.82it/s][07/23/2025-06:37:06] [TRT-LLM] [RANK 1] [E] Error executing load_single_module with args ('model.layers.29.mlp.gate_up_proj', Linear()): CUDA out of memory. Tried to allocate 126.00 MiB. GPU 0 has a total capacity of 23.53 GiB of which 43.00 MiB is free. Process 32689 has 404.00 MiB memory in use. Process 33095 has 19.44 GiB memory in use. Process 33096 has 3.63 GiB memory in use.",
kind="trtllm_torch", R="126.00 MiB", T="23.53 GiB", F="43.00 MiB", procs=[(32689, "404.00 MiB"), (33095, "19.44 GiB"), (33096, "3.63 GiB")])

# TensorRT-LLM's C++ runtime (the TensorRT engine backend under Triton) when a buffer's
# cudaMallocAsync fails at start-up: no sizes; the thread's fix was a smaller max_batch_size.
add("trtllmbackend281", "https://github.com/triton-inference-server/tensorrtllm_backend/issues/281",
"[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)",
kind="runtime", context="tensorrt-llm")


# ---- expectations
GiB = 2**30
U = {'bytes':1,'B':1,'KiB':2**10,'KB':2**10,'kB':2**10,'K':2**10,'MiB':2**20,'MB':2**20,'M':2**20,'GiB':2**30,'GB':2**30,'G':2**30,'TiB':2**40,'TB':2**40}
def b(s):
    m = re.fullmatch(r'([0-9.]+)\s*([A-Za-z]+)', s)
    return int(float(m.group(1)) * U[m.group(2)] + 0.5)
def g(n): return round(n / GiB, 6)
def floor2(v): return math.floor(v * 100 + 1e-9) / 100
def ceil2(v): return math.ceil(v * 100 - 1e-9) / 100
def f2(v): return f"{v:.2f}"

def pytorch(f):
    R, T, F = b(f['R']), b(f['T']), b(f['F'])
    A = b(f['A'])
    if 'RT' in f:
        U_ = b(f['RT']) - A
    else:
        U_ = b(f['U'])
    P = b(f['P']) if 'P' in f else None
    procs = [(pid, b(x)) for pid, x in f.get('procs', [])]
    self_ = None
    if P is None and procs:
        used = T - F
        for pid, x in procs:
            if x > 0 and x * 100 >= used * 99:
                self_ = (pid, x); break
    held = P if P is not None else (self_[1] if self_ else None)
    ctx = GiB // 2
    if held is not None and held >= A:
        n = max(held - A - U_, 0); foot = held
    else:
        n = ctx; foot = A + U_ + n
    need = A + R + n
    listed = [x for pid, x in procs if not (self_ and pid == self_[0])]
    others = sum(listed) if listed else None
    resid = T - F - foot
    others = max(others if others is not None else 0, resid)
    others = max(others, 0)
    causes = []
    if R > T: causes.append('allocation_exceeds_card')
    if others >= max(GiB, T // 10): causes.append('other_process')
    if F < R and U_ >= R and U_ * 100 >= T * 5: causes.append('fragmentation')
    if need * 100 > (T - others) * 95: causes.append('job_too_large')
    if not causes and F >= R: causes.append('limit_not_capacity')
    e = {'engine': 'pytorch-rocm' if f.get('rocm') else 'pytorch', 'format': f['format'], 'device': 0,
         'requested_gib': g(R), 'total_gib': g(T), 'free_gib': g(F), 'allocated_gib': g(A),
         'reserved_unallocated_gib': g(U_), 'need_gib': g(need), 'other_processes_gib': g(others), 'causes': causes}
    if P is not None: e['process_in_use_gib'] = g(P)
    if 'allowed' in f: e['allowed_gib'] = g(b(f['allowed']))
    if self_: e['self_process'] = {'pid': self_[0], 'used_gib': g(self_[1])}
    if f.get('context'): e['raised_in'] = f['context']
    if f.get('P_invalid'): e['process_in_use_invalid'] = True
    return e

def expect(kind, f):
    if kind == 'async':
        R, T, F, A = b(f['R']), b(f['T']), b(f['F']), b(f['A'])
        n = GiB // 2; foot = A + n; need = A + R + n
        others = max(T - F - foot, 0)
        causes = []
        if R > T: causes.append('allocation_exceeds_card')
        if others >= max(GiB, T // 10): causes.append('other_process')
        if need * 100 > (T - others) * 95: causes.append('job_too_large')
        if not causes and F >= R: causes.append('limit_not_capacity')
        e = {'engine': 'pytorch', 'format': 'pytorch-async', 'device': 0, 'requested_gib': g(R), 'total_gib': g(T), 'free_gib': g(F),
             'allocated_gib': g(A), 'need_gib': g(need), 'other_processes_gib': g(others), 'causes': causes}
        if f.get('context'): e['raised_in'] = f['context']
        if f.get('context') == 'tgi': e['commands_include'] = ['--max-batch-prefill-tokens']
        return e
    if kind == 'sampler':
        return {'engine': 'pytorch', 'raised_in': 'vllm', 'max_num_seqs': f['seqs'], 'causes': [],
                'commands_include': [f"--max-num-seqs {f['seqs'] // 2}"], 'commands_exclude': ['--per_device_train_batch_size'],
                'first_fix': 'max-num-seqs'}
    if kind == 'cpu':
        return {'engine': 'pytorch', 'format': 'pytorch-cpu', 'memory': 'host', 'requested_gib': g(f['R_bytes']),
                'causes': ['host_memory'], 'commands_exclude': ['nvidia-smi'], 'first_fix': 'free-system-memory'}
    if kind == 'pinned':
        return {'engine': 'cuda-runtime', 'format': 'cuda-runtime', 'memory': 'host', 'requested_gib': g(f['R_bytes']),
                'causes': ['host_memory'], 'commands_exclude': ['nvidia-smi']}
    if kind == 'pytorch':
        e = pytorch(f)
        if f.get('context') == 'vllm':
            e['commands_include'] = ['--gpu-memory-utilization']
            e['commands_exclude'] = ['--per_device_train_batch_size']
        if 'limit_not_capacity' in e['causes']:
            e['first_fix'] = 'check-memory-limit'
        if f.get('rocm'):
            e['commands_exclude'] = e.get('commands_exclude', []) + ['nvidia-smi']
        return e
    if kind == 'mps':
        A, O, Mx, R = b(f['A']), b(f['O']), b(f['M']), b(f['R'])
        need = A + O + R
        causes = []
        if R > Mx: causes.append('allocation_exceeds_card')
        if need > Mx: causes.append('job_too_large')
        if not causes: causes.append('limit_not_capacity')
        ratio = ceil2(1.7 * need / Mx + 0.05)
        return {'engine': 'pytorch-mps', 'format': 'pytorch-mps', 'requested_gib': g(R), 'allocated_gib': g(A),
                'other_allocations_gib': g(O), 'max_allowed_gib': g(Mx), 'need_gib': g(need), 'causes': causes,
                'commands_include': [f'PYTORCH_MPS_HIGH_WATERMARK_RATIO={f2(ratio)}'], 'commands_exclude': ['nvidia-smi']}
    if kind == 'runtime':
        e = {'engine': 'cuda-runtime', 'format': 'cuda-runtime', 'causes': [], 'commands_include': ['nvidia-smi']}
        if 'R_bytes' in f: e['requested_gib'] = g(f['R_bytes'])
        if f.get('context'): e['raised_in'] = f['context']
        if f.get('context') == 'tensorrt-llm': e['commands_include'].append('--max_batch_size 256')
        return e
    if kind == 'vllm_free':
        T = b(f['T']); unit = 2**30
        F = int(f['Fn'] * unit + 0.5)
        e = {'engine': 'vllm', 'format': 'vllm', 'total_gib': g(T), 'free_gib': g(F), 'requested_gib': g(b(f['want'])),
             'gpu_memory_utilization': f['util'], 'other_processes_gib': g(T - F), 'causes': ['other_process']}
        share = floor2(F / T) - 0.01
        if share >= 0.1:
            e['commands_include'] = [f'--gpu-memory-utilization {f2(share)}']
        else:
            e['first_fix'] = 'free-other-processes'
        if 'device' in f: e['device'] = f['device']
        return e
    if kind == 'vllm_len':
        return {'engine': 'vllm', 'format': 'vllm', 'max_model_len': f['N'], 'kv_cache_tokens': f['K'],
                'causes': ['context_exceeds_kv_cache'], 'commands_include': [f"--max-model-len {f['K']}"]}
    if kind == 'sglang':
        e = {'engine': 'sglang', 'format': 'sglang', 'causes': ['no_kv_cache_memory']}
        if 'weights' in f and 'after' in f:
            W, A = b(f['weights']), b(f['after'])
            e['mem_fraction_static'] = f['frac']
            e['commands_include'] = [f"--mem-fraction-static {f2(min(0.95, ceil2(W / (W + A)) + 0.02))}"]
        elif 'frac' in f:
            e['mem_fraction_static'] = f['frac']
            e['commands_include'] = [f"--mem-fraction-static {f2(min(0.95, floor2(f['frac'] + 0.05)))}"]
        else:
            e['commands_include'] = ['--mem-fraction-static 0.90']
        if 'weights' in f: e['weights_gib'] = g(b(f['weights']))
        if 'after' in f: e['avail_after_weights_gib'] = g(b(f['after']))
        e['commands_exclude'] = ['--per_device_train_batch_size', '--gpu-memory-utilization']
        return e
    if kind == 'tgi':
        e = {'engine': 'tgi', 'format': 'tgi', 'prefill_tokens': f['prefill'], 'causes': ['job_too_large'],
             'commands_include': [f"--max-batch-prefill-tokens {max(f['prefill'] // 2, 1)}"]}
        if 'total' in f:
            e['batch_total_tokens'] = f['total']
            e['commands_include'] = [f"--max-batch-total-tokens {f['total'] // 2}"]
            e['first_fix'] = 'max-batch-total-tokens'
        return e
    if kind == 'xla':
        e = {'engine': 'jax', 'format': 'xla', 'requested_gib': g(f['R_bytes']), 'causes': [],
             'commands_include': ['XLA_PYTHON_CLIENT_MEM_FRACTION=.95']}
        for k, key in (('xla_total', 'xla_total_gib'), ('xla_params', 'xla_parameters_gib'), ('xla_temp', 'xla_temp_gib'),
                       ('xla_live', 'xla_live_out_gib'), ('xla_frag', 'xla_fragmentation_gib')):
            if k in f: e[key] = g(b(f[k]))
        if 'device' in f: e['device'] = f['device']
        return e
    if kind == 'tpu':
        used, cap = b(f['used']), b(f['cap'])
        return {'engine': 'jax', 'format': 'xla-compile', 'total_gib': g(cap), 'need_gib': g(used), 'memory_space': f['space'],
                'causes': ['job_too_large'] if used > cap else []}
    if kind == 'tf':
        e = {'engine': 'tensorflow', 'format': 'tensorflow', 'tensor_shape': f['shape'], 'causes': []}
        n = 1
        for d in f['shape']: n *= d
        if 'dtype' in f:
            e['requested_gib'] = g(n * f['size']); e['dtype'] = f['dtype']
        if 'device' in f: e['device'] = f['device']
        if f['shape'][0] > 1: e['commands_include'] = [f"batch_size={f['shape'][0] // 2}"]
        return e
    if kind == 'nccl':
        e = {'engine': 'nccl', 'format': 'nccl', 'device': f['device'], 'causes': [], 'commands_include': ['NCCL_NVLS_ENABLE=0']}
        if 'R_bytes' in f: e['requested_gib'] = g(f['R_bytes'])
        return e
    if kind == 'unsloth_train':
        R, T, F = b(f['R']), b(f['T']), b(f['F'])
        e = {'engine': 'pytorch', 'format': 'pytorch>=2.2', 'device': 0, 'requested_gib': g(R), 'total_gib': g(T),
             'free_gib': g(F), 'raised_in': 'unsloth', 'causes': [],
             'commands_include': ['max_seq_length=2048', 'use_gradient_checkpointing="unsloth"', 'load_in_4bit=True'],
             'commands_exclude': ['--per_device_train_batch_size', 'model.gradient_checkpointing_enable()']}
        used = T - F
        for pid, x in f['procs']:
            if b(x) * 100 >= used * 99:
                e['self_process'] = {'pid': pid, 'used_gib': g(b(x))}
        return e
    if kind == 'trtllm_executor':
        T, F = round(f['T'] * GiB), round(f['F'] * GiB)
        e = {'engine': 'tensorrt-llm', 'format': 'trtllm-executor', 'component': f['component'], 'total_gib': g(T), 'free_gib': g(F),
             'commands_include': ['--max_num_tokens 4096'], 'commands_exclude': ['--gpu-memory-utilization', 'nvidia-smi']}
        if f['component'] != 'KV cache':
            e['causes'] = ['job_too_large']
            e['commands_include'].append('--tp_size 2')
        elif F * 10 >= T:  # a tenth of the card still free: TensorRT-LLM's own estimate asked for more, not the weights
            e['causes'] = []
            e['first_fix'] = 'kv-cache-free-gpu-memory-fraction'
            e['commands_include'].append('--kv_cache_free_gpu_memory_fraction 0.45')
            e['commands_exclude'].append('--tp_size')
        else:
            e['causes'] = ['no_kv_cache_memory']
            e['commands_include'].append('--tp_size 2')
        return e
    if kind == 'trtllm_torch':
        R, T, F = b(f['R']), b(f['T']), b(f['F'])
        others = sum(b(x) for _, x in f['procs'])
        causes = ['other_process'] if others >= max(GiB, T // 10) else []
        return {'engine': 'pytorch', 'format': 'pytorch>=2.2', 'device': 0, 'requested_gib': g(R), 'total_gib': g(T),
                'free_gib': g(F), 'raised_in': 'tensorrt-llm', 'other_processes_gib': g(others), 'causes': causes,
                'commands_include': ['nvidia-smi'], 'commands_exclude': ['--per_device_train_batch_size', '--gpu-memory-utilization']}
    if kind == 'unsloth_host':
        return {'engine': 'unsloth', 'format': 'unsloth-studio', 'memory': 'host', 'requested_gib': g(b(f['R'])),
                'total_gib': g(b(f['avail'])), 'free_gib': g(b(f['usable'])), 'causes': ['host_memory'],
                'commands_include': ['UNSLOTH_ALLOW_HOST_OFFLOAD=1', 'free -h'], 'commands_exclude': ['nvidia-smi'],
                'first_fix': 'free-system-memory'}
    if kind == 'host':
        return {'engine': 'ollama', 'format': 'ollama', 'memory': 'host', 'requested_gib': g(b(f['R'])), 'free_gib': g(b(f['F'])),
                'causes': ['host_memory'], 'commands_exclude': ['nvidia-smi', '-ngl']}
    if kind == 'llama':
        e = {'engine': f.get('engine', 'llama.cpp'), 'format': 'llama.cpp', 'causes': []}
        if 'R' in f: e['requested_gib'] = g(b(f['R']))
        if 'R_bytes' in f: e['requested_gib'] = g(f['R_bytes'])
        if 'device' in f: e['device'] = f['device']
        if 'stage' in f: e['stage'] = f['stage']
        if 'backend' in f: e['backend'] = f['backend']
        mem = f.get('memory', 'gpu'); e['memory'] = mem
        if mem == 'host': e['causes'] = ['host_memory']
        if f.get('rocm'): e['rocm'] = True
        if f.get('stage') in ('compute', 'kv_cache'):
            e['first_fix_not'] = 'fewer-gpu-layers'
        return e
    raise SystemExit('kind ' + kind)

reports, not_reports = [], []
for m in M:
    f = dict(m['facts']); kind = f.pop('kind')
    if kind == 'none':
        not_reports.append({'id': m['id'], 'source': m['source'], 'message': m['message'], 'expect_error': 'no out-of-memory report found'})
        continue
    reports.append({'id': m['id'], 'source': m['source'], 'message': m['message'], 'expect': expect(kind, f)})
doc = {'note': 'v2 shapes (spec/oom.md, "v2"): verbatim messages from public bug reports (source = the thread). expect: '
       'values read off the message and computed independently with the arithmetic of spec/oom.md (GiB = 2^30, 6 decimals). '
       'commands_include / commands_exclude: substrings some / no fix command must hold; first_fix: the id of the first fix; '
       'first_fix_not: an id the first fix must not have.',
       'reports': reports, 'not_reports': not_reports}
json.dump(doc, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'public_v2.json'), 'w'), indent=1, ensure_ascii=False)
print(len(reports), len(not_reports))
