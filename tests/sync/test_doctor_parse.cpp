// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <random>

#include "sync/doctor_parse.hpp"

using namespace gpurent;

namespace {
std::string section(const std::string& name, int status, const std::string& text)
{
  return "@@gpurent:begin " + name + "\n" + text + "\n@@gpurent:end " + std::to_string(status) + "\n";
}
}  // namespace

TEST_CASE("parse_gpu_csv: nvidia-smi rows, N/A values, and rejects", "[sync][doctor]")
{
  const auto g = parse_gpu_csv("0, NVIDIA H100 80GB HBM3, 81559, 20480, 61079, 550.54.15\n1, NVIDIA A100-SXM4-80GB, 81920, [N/A], 81000, 535.1\n");
  REQUIRE(g.has_value());
  REQUIRE(g->size() == 2);
  CHECK((*g)[0] == GpuInfo{0, "NVIDIA H100 80GB HBM3", 81559, 20480, 61079, "550.54.15", std::nullopt});
  CHECK((*g)[1].memory_used_mib == 0);
  CHECK_FALSE(parse_gpu_csv("0, x, 1, 2\n").has_value());
  CHECK_FALSE(parse_gpu_csv("a, x, 1, 2, 3, d\n").has_value());
  CHECK_FALSE(parse_gpu_csv("0, x, 1 GiB, 2, 3, d\n").has_value());
  CHECK(parse_gpu_csv("")->empty());
}

TEST_CASE("parse_gpu_csv: utilization.gpu as a 7th field, optional and checked", "[sync][doctor]")
{
  const auto g = parse_gpu_csv("0, NVIDIA H100 80GB HBM3, 81559, 3, 81556, 550.54.15, 0\n"
                               "1, NVIDIA H100 80GB HBM3, 81559, 70000, 11559, 550.54.15, 97\n"
                               "2, NVIDIA H100 80GB HBM3, 81559, 0, 81559, 550.54.15, [N/A]\n"
                               "3, NVIDIA H100 80GB HBM3, 81559, 0, 81559, 550.54.15, [Not Supported]\n");
  REQUIRE(g.has_value());
  REQUIRE(g->size() == 4);
  CHECK((*g)[0].utilization_pct == std::optional<std::uint32_t>(0));
  CHECK((*g)[1].utilization_pct == std::optional<std::uint32_t>(97));
  CHECK((*g)[1].driver == "550.54.15");
  CHECK_FALSE((*g)[2].utilization_pct.has_value());
  CHECK_FALSE((*g)[3].utilization_pct.has_value());
  // The older 6-field form (without utilization.gpu) still parses, utilization unknown.
  const auto old = parse_gpu_csv("0, NVIDIA H100 80GB HBM3, 81559, 3, 81556, 550.54.15\n");
  REQUIRE(old.has_value());
  CHECK_FALSE((*old)[0].utilization_pct.has_value());
  CHECK_FALSE(parse_gpu_csv("0, x, 1, 2, 3, d, 101\n").has_value());
  CHECK_FALSE(parse_gpu_csv("0, x, 1, 2, 3, d, busy\n").has_value());
  CHECK_FALSE(parse_gpu_csv("0, x, 1, 2, 3, d, 5, extra\n").has_value());
  CHECK(doctor_script().find("driver_version,utilization.gpu --format=csv,noheader,nounits") != std::string::npos);
}

TEST_CASE("parse_gpu_csv: property: rendered rows parse back", "[sync][doctor]")
{
  std::mt19937 rng(1);
  for (int round = 0; round < 100; ++round) {
    std::vector<GpuInfo> gpus;
    std::string text;
    for (int i = 0; i < std::uniform_int_distribution<int>(0, 8)(rng); ++i) {
      GpuInfo g{i, "NVIDIA RTX " + std::to_string(rng() % 10000), rng() % 200000, rng() % 200000, rng() % 200000,
                std::to_string(rng() % 600) + "." + std::to_string(rng() % 100), std::nullopt};
      text += std::to_string(g.index) + ", " + g.name + ", " + std::to_string(g.memory_total_mib) + ", " +
              std::to_string(g.memory_used_mib) + ", " + std::to_string(g.memory_free_mib) + ", " + g.driver;
      if (rng() % 2 == 0) {  // the current 7-field form; else the older 6-field one
        g.utilization_pct = static_cast<std::uint32_t>(rng() % 101);
        text += ", " + std::to_string(*g.utilization_pct);
      }
      text += "\n";
      gpus.push_back(g);
    }
    const auto back = parse_gpu_csv(text);
    REQUIRE(back.has_value());
    CHECK(*back == gpus);
  }
}

TEST_CASE("parse_compute_apps_csv and parse_ps", "[sync][doctor]")
{
  const auto apps = parse_compute_apps_csv("1234, /usr/bin/python3, 20480\n77, python, with, commas, [N/A]\n");
  REQUIRE(apps.has_value());
  REQUIRE(apps->size() == 2);
  CHECK((*apps)[0] == GpuApp{1234, "/usr/bin/python3", 20480});
  CHECK((*apps)[1].process_name == "python, with, commas");
  CHECK_FALSE((*apps)[1].used_mib.has_value());
  CHECK_FALSE(parse_compute_apps_csv("x, y, 1\n").has_value());
  CHECK_FALSE(parse_compute_apps_csv("12 python 5\n").has_value());

  const auto ps = parse_ps("    PID    PPID STAT ELAPSED COMMAND\n      1       0 Ss        100 /sbin/init\n   1234       1 Sl       3600 python train.py --lr 1e-4\n");
  REQUIRE(ps.has_value());
  REQUIRE(ps->size() == 2);
  CHECK((*ps)[1] == PsRow{1234, 1, "Sl", 3600, "python train.py --lr 1e-4"});
  CHECK_FALSE(parse_ps("PID PPID\nx y z\n").has_value());
}

TEST_CASE("parse_torch_line and parse_nvcc_version", "[sync][doctor]")
{
  const auto t = parse_torch_line("some warning\n2.3.1+cu121 12.1 True\n");
  REQUIRE(t.has_value());
  CHECK(t->version == "2.3.1+cu121");
  CHECK(t->cuda == "12.1");
  CHECK(t->available);
  CHECK(parse_torch_line("2.4.0+cpu None False")->cuda == "None");
  CHECK_FALSE(parse_torch_line("ModuleNotFoundError: No module named 'torch'").has_value());
  CHECK(parse_nvcc_version("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\n") ==
        std::optional<std::string>("12.4"));
  CHECK_FALSE(parse_nvcc_version("bash: nvcc: command not found").has_value());
}

TEST_CASE("split_sections: the doctor script's markers, with and without trailing newlines", "[sync][doctor]")
{
  const auto s = split_sections(section("gpus", 0, "0, x, 1, 2, 3, d") + section("torch", 1, "Traceback\nNo module named 'torch'") +
                                "@@gpurent:begin nvcc\nnvcc: command not found\n\n@@gpurent:end 127\n");
  REQUIRE(s.size() == 3);
  CHECK(s.at("gpus").text == "0, x, 1, 2, 3, d");
  CHECK(s.at("torch").status == 1);
  CHECK(s.at("nvcc").status == 127);
  CHECK(split_sections("garbage").empty());
  CHECK(doctor_script().find("--query-compute-apps=pid,process_name,used_memory") != std::string::npos);
}

TEST_CASE("classify_process: notebooks, model servers, training", "[sync][doctor]")
{
  CHECK(classify_process("/opt/conda/bin/python -m ipykernel_launcher -f /root/.local/share/jupyter/runtime/kernel-1.json") ==
        ProcessKind::notebook);
  CHECK(classify_process("python3 -m vllm.entrypoints.openai.api_server --model x") == ProcessKind::model_server);
  CHECK(classify_process("/usr/local/bin/ollama runner") == ProcessKind::model_server);
  CHECK(classify_process("./llama-server -m model.gguf") == ProcessKind::model_server);
  CHECK(classify_process("text-generation-launcher --model-id x") == ProcessKind::model_server);
  CHECK(classify_process("torchrun --nproc_per_node 8 train.py") == ProcessKind::training);
  CHECK(classify_process("python3 app.py") == ProcessKind::other);
}

TEST_CASE("diagnose: leftovers, what to kill, and servers without GPU or torch", "[sync][doctor]")
{
  SECTION("a GPU with a notebook kernel, an orphaned training run and a live job")
  {
    const std::string out =
        section("gpus", 0, "0, NVIDIA A100-SXM4-80GB, 81920, 70000, 11920, 550.54.15") +
        section("apps", 0, "100, python, 20000\n200, python, 40000\n300, python, 10000\n999, python, 5") +
        section("ps", 0, "PID PPID STAT ELAPSED COMMAND\n100 50 Sl 9000 python -m ipykernel_launcher -f k.json\n"
                         "200 1 Sl 7200 python train.py\n300 40 Rl 60 python train.py --resume\n") +
        section("torch", 0, "2.3.1+cu121 12.1 True") + section("nvcc", 0, "Cuda compilation tools, release 12.1, V12.1.105");
    const auto r = diagnose(split_sections(out));
    REQUIRE(r.gpus.size() == 1);
    REQUIRE(r.processes.size() == 4);
    CHECK(r.processes[0].kind == ProcessKind::notebook);
    CHECK(r.processes[0].leftover);
    CHECK(r.processes[1].leftover);  // orphaned
    CHECK_FALSE(r.processes[2].leftover);
    CHECK_FALSE(r.processes[3].leftover);  // not visible to ps
    REQUIRE(r.advice.size() == 2);
    CHECK(r.advice[0].rfind("kill 100", 0) == 0);
    CHECK(r.advice[1].rfind("kill 200", 0) == 0);
    CHECK(r.torch->available);
    CHECK(r.nvcc == std::optional<std::string>("12.1"));
  }
  SECTION("no nvidia-smi and no torch")
  {
    const auto r = diagnose(split_sections(section("gpus", 127, "sh: nvidia-smi: not found") + section("apps", 127, "") +
                                           section("ps", 0, "PID PPID STAT ELAPSED COMMAND\n1 0 S 5 init") +
                                           section("torch", 1, "ModuleNotFoundError: No module named 'torch'") +
                                           section("nvcc", 127, "nvcc: command not found")));
    CHECK(r.gpus.empty());
    CHECK_FALSE(r.nvidia_smi);
    CHECK(r.gpu_problem.find("nvidia-smi not found") != std::string::npos);
    CHECK_FALSE(r.torch.has_value());
    CHECK(r.torch_problem == "PyTorch is not installed for python3");
    CHECK(r.advice.size() == 2);
  }
  SECTION("nvidia-smi present but the driver is not loaded")
  {
    const auto r = diagnose(split_sections(section("gpus", 9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")));
    CHECK(r.nvidia_smi);
    CHECK(r.gpu_problem.find("couldn't communicate") != std::string::npos);
  }
  SECTION("torch cannot see the GPU")
  {
    const auto r = diagnose(split_sections(section("gpus", 0, "0, RTX 4090, 24564, 0, 24564, 550.1") + section("torch", 0, "2.4.0+cpu None False")));
    bool said = false;
    for (const auto& a : r.advice) {
      said |= a.find("CPU-only") != std::string::npos;
    }
    CHECK(said);
  }
}

TEST_CASE("to_observation: what status keeps of a doctor report", "[sync][doctor]")
{
  const gpurent::TimePoint at{std::chrono::seconds{1'790'000'000}};
  SECTION("GPUs and the processes holding memory")
  {
    const auto r = diagnose(split_sections(section("gpus", 0, "0, H100, 81559, 30010, 51549, 550.1, 87\n1, H100, 81559, 2, 81557, 550.1, 0") +
                                           section("apps", 0, "100, python, 30000") +
                                           section("ps", 0, "PID PPID STAT ELAPSED COMMAND\n100 50 Rl 60 python train.py")));
    CHECK(r.apps_listed);
    const auto o = to_observation(r, 7, at);
    REQUIRE(o.has_value());
    CHECK(o->server_id == 7);
    CHECK(o->at == at);
    REQUIRE(o->gpus.size() == 2);
    CHECK(o->gpus[0] == GpuSample{0, 30010, 81559, 87});
    CHECK(o->gpus[1] == GpuSample{1, 2, 81559, 0});
    CHECK(o->compute_processes == std::optional<std::uint32_t>(1));
  }
  SECTION("an empty process list is zero processes; a failed query is unknown")
  {
    const auto idle = diagnose(split_sections(section("gpus", 0, "0, H100, 81559, 3, 81556, 550.1, 0") + section("apps", 0, "")));
    CHECK(to_observation(idle, 1, at)->compute_processes == std::optional<std::uint32_t>(0));
    const auto failed = diagnose(split_sections(section("gpus", 0, "0, H100, 81559, 3, 81556, 550.1") + section("apps", 6, "error")));
    CHECK_FALSE(failed.apps_listed);
    const auto o = to_observation(failed, 1, at);
    REQUIRE(o.has_value());
    CHECK_FALSE(o->compute_processes.has_value());
    CHECK_FALSE(o->gpus[0].utilization_pct.has_value());
  }
  SECTION("no GPU list: nothing to record")
  {
    const auto r = diagnose(split_sections(section("gpus", 127, "sh: nvidia-smi: not found")));
    CHECK_FALSE(to_observation(r, 1, at).has_value());
  }
}
