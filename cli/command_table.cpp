// SPDX-License-Identifier: MIT
#include "cli/command_table.hpp"

#include <algorithm>
#include <cctype>

#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

// Every example is a command line that works as shown (tests/cli/test_help.cpp runs the
// offline ones); 203.0.113.7 is a documentation address (RFC 5737).
constexpr std::array<CommandDoc, 30> k_docs{{
    {"",
     {"gpurent plan llama-3.1-8b --task qlora --grad-checkpointing --card rtx-4090", "gpurent offers --min-vram 40",
      "gpurent up --from-plan llama-3.1-8b --task lora --name ft", "gpurent help plan"}},
    {"plan",
     {"gpurent plan llama-3.1-8b", "gpurent plan qwen2.5-7b --task lora --card a100-80gb",
      "gpurent plan llama-3.1-70b --task serve --context 16384 --provider runpod",
      "gpurent plan llama-3.1-405b --task train --grad-checkpointing --tokens 100M"}},
    {"fits", {"gpurent fits rtx-4090", "gpurent fits a100-80gb --gpus 2 --task serve", "gpurent fits rtx-5090 --task qlora", ""}},
    {"models", {"gpurent models", "gpurent models --json", "", ""}},
    {"cards", {"gpurent cards", "gpurent cards --json", "", ""}},
    {"offers",
     {"gpurent offers --min-vram 40", "gpurent offers --provider runpod --spot",
      "gpurent offers --refresh --provider vast   (needs VAST_API_KEY)", ""}},
    {"cost",
     {"gpurent cost --provider runpod --card rtx-4090 --hours 2",
      "gpurent cost --provider runpod --card a100-80gb-pcie --gpus 2 --hours 8 --spot",
      "gpurent cost --provider gpucloud --card rtx-pro-6000 --hours 3 --price 1.6", ""}},
    {"config", {"gpurent config init", "gpurent config set budget_usd 50", "gpurent config show", ""}},
    {"config show", {"gpurent config show", "gpurent config show --json", "", ""}},
    {"config path", {"gpurent config path", "${EDITOR:-vi} \"$(gpurent config path)\"", "", ""}},
    {"config init", {"gpurent config init", "gpurent config init --force", "", ""}},
    {"config set",
     {"pass show runpod | gpurent config set runpod_api_key -", "gpurent config set default_provider runpod",
      "gpurent config set budget_usd 50", "gpurent config set prices.gpucloud.rtx-pro-6000 1.6"}},
    {"config get", {"gpurent config get budget_usd", "gpurent config get default_provider", "", ""}},
    {"oom",
     {"gpurent oom train.log", "python train.py 2>&1 | tail -n 50 | gpurent oom --card rtx-4090",
      "gpurent oom vllm.log --json", ""}},
    {"up",
     {"gpurent up --provider lambda --card a100-40gb --name train1",
      "gpurent up --from-plan llama-3.1-8b --task lora --name ft --yes",
      "gpurent up --provider runpod --card rtx-4090 --spot --name cheap --no-wait",
      "gpurent up --provider lambda --card h100-80gb --gpus 8 --nodes 2 --group big"}},
    {"attach",
     {"gpurent attach --provider gpucloud --card rtx-pro-6000 --host root@203.0.113.7 --name box",
      "gpurent attach --provider runpod --card l4 --host root@203.0.113.7:2222 --name pod",
      "gpurent attach --provider vast --card h100-sxm --host root@203.0.113.8 --name n1 --group big", ""}},
    {"status", {"gpurent status", "gpurent status train1", "gpurent status --refresh --json", "gpurent status big"}},
    {"start",
     {"gpurent start train1", "gpurent start train1 --yes --json", "gpurent start train1 --accept-new-host-key",
      "gpurent start big   (a group: every member)"}},
    {"down",
     {"gpurent down train1 --stop", "gpurent down train1 --destroy --to ./train1-backup",
      "gpurent down box --destroy --no-backup --yes", ""}},
    {"ssh", {"gpurent ssh train1", "gpurent ssh train1 -- nvidia-smi", "gpurent ssh --host root@203.0.113.7:2222 -- df -h", ""}},
    {"backup",
     {"gpurent backup train1", "gpurent backup train1 /workspace/checkpoints --to ./ckpt",
      "gpurent backup --host root@203.0.113.7 /root/out /root/logs --exclude '*.tmp'", ""}},
    {"doctor", {"gpurent doctor train1", "gpurent doctor --host root@203.0.113.7 --json", "", ""}},
    {"push",
     {"gpurent push train1", "gpurent push train1 ./src --to /workspace/src --exclude '*.ckpt'",
      "gpurent push --host root@203.0.113.7 . --json", "gpurent push train1 --allow-secret config/dev.env --with-git"}},
    {"run",
     {"gpurent run train1 -- python train.py --epochs 3",
      "gpurent run train1 --then backup:checkpoints --then down:destroy -- python train.py",
      "gpurent run train1 -d --env WANDB_MODE=offline -- 'python prep.py && python train.py'",
      "gpurent run big -- torchrun --nproc-per-node 8 train.py   (a group: every node, with its rank)"}},
    {"logs", {"gpurent logs train1 -f", "gpurent logs train1 20261130-101500-3fa9 --tail 100", "gpurent logs big",
              "gpurent logs big --node 1 -f"}},
    {"jobs", {"gpurent jobs train1", "gpurent jobs train1 --json", "gpurent jobs train1 --kill 20261130-101500-3fa9", ""}},
    {"autostop",
     {"gpurent autostop train1 --idle 30m", "gpurent autostop train1 --idle 20m --then stop --release-after 24h --backup-to me@203.0.113.9:ckpt",
      "gpurent autostop box --idle 1h --on-idle 'curl -fsS -d idle https://ntfy.sh/my-topic'", "gpurent autostop train1 --pause 2h"}},
    {"help", {"gpurent help", "gpurent help plan", "gpurent help config set", ""}},
    {"completion",
     {"gpurent completion bash > ~/.local/share/bash-completion/completions/gpurent",
      "gpurent completion zsh > ~/.zfunc/_gpurent", "gpurent completion fish > ~/.config/fish/completions/gpurent.fish", ""}},
    {"man", {"gpurent man > gpurent.1 && man -l gpurent.1", "man gpurent   (after cmake --install)", "", ""}},
}};

struct Metavar {
  std::string_view option;
  std::string_view name;
};

constexpr std::array<Metavar, 42> k_metavars{{
    {"--workdir", "DIR"},      {"--env", "NAME=VALUE"},  {"--then", "STEP"},         {"--stop", "JOB"},
    {"--kill", "JOB"},         {"--grace", "SECONDS"},   {"--tail", "N"},
    {"--gpus", "N"},           {"--hours", "H"},         {"--stopped-hours", "H"},   {"--hibernated-hours", "H"},
    {"--price", "USD"},        {"--max-price", "USD"},   {"--min-vram", "GIB"},      {"--from-plan", "MODEL"},
    {"--identity", "KEY"},     {"--known-hosts", "FILE"}, {"--ssh-key", "PUBKEY"},   {"--to", "DIR"},
    {"--include", "GLOB"},     {"--exclude", "GLOB"},    {"--host", "USER@HOST[:PORT]"}, {"--context", "TOKENS"},
    {"--allow-secret", "PATH"}, {"--streams", "N"},
    {"--since", "TIME"},       {"--path", "REMOTE_PATH"}, {"--params", "COUNT"},     {"--gguf", "FILE|URL"},
    {"--idle", "DURATION"},    {"--release-after", "DURATION"}, {"--pause", "DURATION"},
    {"--server-credential", "ENV"}, {"--backup-to", "USER@HOST:PATH"}, {"--backup-dir", "REMOTE_DIR"},
    {"--on-idle", "CMD"},      {"--autostop", "DURATION[:ACTION]"},
    {"--nodes", "N"},          {"--group", "NAME"},      {"--node", "K"},            {"--master-addr", "ADDR"},
    {"--master-port", "PORT"},
}};

template <class Range, class F>
std::vector<std::string> names_of(const Range& items, F name)
{
  std::vector<std::string> out;
  for (const auto& item : items) {
    out.emplace_back(name(item));
  }
  return out;
}

ValueSet words(std::vector<std::string> w) { return ValueSet{ValueKind::word, std::move(w)}; }

}  // namespace

std::span<const CommandDoc> command_docs() noexcept { return k_docs; }

std::vector<std::string_view> command_examples(std::string_view path)
{
  std::vector<std::string_view> out;
  for (const auto& d : k_docs) {
    if (d.path == path) {
      for (const auto e : d.examples) {
        if (!e.empty()) {
          out.push_back(e);
        }
      }
    }
  }
  return out;
}

std::string option_metavar(std::string_view option)
{
  for (const auto& m : k_metavars) {
    if (m.option == option) {
      return std::string(m.name);
    }
  }
  std::string out;
  for (const char c : option) {
    if (c != '-' || !out.empty()) {
      out.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

ValueSet option_values(std::string_view path, std::string_view option)
{
  if (option == "--card" || (path == "fits" && option == "card")) {
    return words(names_of(card_catalog(), [](const Card& c) { return c.id; }));
  }
  if (option == "--provider") {
    return words(names_of(provider_catalog(), [](const ProviderInfo& p) { return p.name; }));
  }
  if (option == "--task") {
    return words(names_of(all_tasks(), [](Task t) { return std::string(to_string(t)); }));
  }
  if (option == "--engine") {
    return words(names_of(all_engines(), [](Engine e) { return std::string(to_string(e)); }));
  }
  if (option == "--weights") {
    return words(names_of(all_weight_formats(), [](WeightFormat w) { return std::string(to_string(w)); }));
  }
  if (option == "--kv-cache") {
    return words(names_of(all_kv_dtypes(), [](KvDtype k) { return std::string(to_string(k)); }));
  }
  if (option == "--shard") {
    return words(names_of(all_shards(), [](Shard v) { return std::string(to_string(v)); }));
  }
  if (option == "--optimizer") {
    return words(names_of(all_optimizers(), [](Optimizer o) { return std::string(to_string(o)); }));
  }
  if ((path == "plan" && option == "model") || option == "--from-plan") {
    return words(names_of(model_catalog(), [](const ModelArch& m) { return m.name; }));
  }
  if (option == "--identity" || option == "--known-hosts" || option == "--ssh-key" || option == "--gguf" ||
      (path == "oom" && option == "file")) {
    return ValueSet{ValueKind::file, {}};
  }
  if (option == "--to" || option == "--workdir") {
    return ValueSet{ValueKind::directory, {}};
  }
  if (path == "autostop" && option == "--then") {
    return words({"stop", "hibernate", "destroy"});
  }
  if (option == "--then") {
    return words({"backup:", "down:stop", "down:hibernate", "down:destroy"});
  }
  // NAME, the first word, of the commands that act on a tracked server.
  if ((option == "name" && (path == "autostop" || path == "doctor" || path == "down" || path == "jobs" || path == "run" ||
                            path == "ssh" || path == "start" || path == "status")) ||
      (option == "args" && (path == "backup" || path == "logs" || path == "push"))) {
    return ValueSet{ValueKind::server, {}};
  }
  if (path == "completion" && option == "shell") {
    return words({"bash", "zsh", "fish"});
  }
  if (path == "help" && option == "command") {
    return words(names_of(command_names(), [](std::string_view n) { return std::string(n); }));
  }
  if ((path == "config get" || path == "config set") && option == "key") {
    std::vector<std::string> keys;
    for (const auto& k : config_keys()) {
      if (k.name != "prices") {
        keys.emplace_back(k.name);
      }
    }
    return words(std::move(keys));
  }
  return {};
}

}  // namespace gpurent
