// SPDX-License-Identifier: MIT
// data/models.json, the built-in model catalogue as data: the strict reader accepts it, every
// entry is sourced and uniquely named, the reader refuses unknown keys and wrong types naming the
// entry, and the catalogue the build generated from it is exactly what the reader yields.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "common/text.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/model_data.hpp"
#include "sizing/param_count.hpp"
#include "sizing/quant_skip.hpp"

namespace {

std::string models_file()
{
  std::ifstream in(std::string(GPURENT_SOURCE_DIR) + "/data/models.json", std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The file with one edit made to its parsed form.
template <class Edit>
std::string edited(Edit edit)
{
  auto doc = nlohmann::json::parse(models_file());
  edit(doc);
  return doc.dump();
}

std::string error_of(const std::string& text)
{
  const auto r = gpurent::models_from_json(text);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == gpurent::Errc::invalid_input);
  return r.error().message;
}

}  // namespace

TEST_CASE("models.json: the reader accepts it, every entry is sourced and uniquely named", "[sizing][model_data]")
{
  const std::string text = models_file();
  REQUIRE_FALSE(text.empty());
  const auto models = gpurent::models_from_json(text);
  REQUIRE(models.has_value());
  CHECK(models->size() >= 45);
  const auto doc = nlohmann::json::parse(text);
  CHECK(doc.at("note").is_string());
  std::set<std::string> names;
  for (const auto& m : *models) {
    INFO(m.name);
    CHECK(m.source.starts_with("https://huggingface.co/"));
    CHECK(m.params > 0);
    CHECK(names.insert(gpurent::to_lower(m.name)).second);
    for (const auto& n : m.aliases) {
      CHECK(names.insert(gpurent::to_lower(n)).second);
    }
    for (const auto& id : m.hf_ids) {
      CHECK(names.insert(gpurent::to_lower(id)).second);
    }
    for (const auto& q : m.quantized) {
      CHECK(names.insert(gpurent::to_lower(q.hf_id)).second);
    }
  }
}

TEST_CASE("models.json: the generated catalogue is exactly what the reader yields", "[sizing][model_data]")
{
  const auto models = gpurent::models_from_json(models_file());
  REQUIRE(models.has_value());
  const auto generated = gpurent::generated_model_catalog();
  REQUIRE(generated.size() == models->size());
  // Every field, defaults included, compared through the writer.
  CHECK(gpurent::models_to_json(generated, "", true) == gpurent::models_to_json(*models, "", true));
  for (std::size_t i = 0; i < generated.size(); ++i) {
    INFO(generated[i].name);
    CHECK(generated[i].name == (*models)[i].name);
    CHECK_FALSE(generated[i].checkpoint.has_value());
    CHECK_FALSE(generated[i].adapter.has_value());
    CHECK(generated[i].approximate.empty());
  }
  // What the binary looks up is the generated catalogue.
  CHECK(gpurent::builtin_model_catalog().size() == generated.size());
}

TEST_CASE("models.json: the weights a quantized checkpoint keeps in 16 bits match its skip list", "[sizing][model_data]")
{
  // skip_linear/skip_experts are data, computed once from the architecture and the modules named.
  for (const auto& m : gpurent::builtin_model_catalog()) {
    for (const auto& q : m.quantized) {
      INFO(q.hf_id);
      const auto kept = gpurent::unquantized_linears(m, q.skip);
      CHECK(q.skip_linear == kept.linear);
      CHECK(q.skip_experts == kept.experts);
    }
    INFO(m.name);
    const auto kept = gpurent::unquantized_linears(m, m.quant_skip);
    CHECK(m.quant_skip_linear == kept.linear);
    CHECK(m.quant_skip_experts == kept.experts);
  }
}

TEST_CASE("models.json: writing and reading back gives the same catalogue", "[sizing][model_data]")
{
  const auto models = gpurent::models_from_json(models_file());
  REQUIRE(models.has_value());
  const std::string written = gpurent::models_to_json(*models, "note");
  const auto again = gpurent::models_from_json(written);
  REQUIRE(again.has_value());
  CHECK(gpurent::models_to_json(*again, "note", true) == gpurent::models_to_json(*models, "note", true));
  // Defaults are left out: a dense model without sliding windows writes no global_layers.
  const auto doc = nlohmann::json::parse(written);
  const auto& first = doc["models"][0];
  CHECK(first.contains("layers"));
  CHECK_FALSE(first.contains("global_layers"));
  CHECK_FALSE(first.contains("kv_lora_rank"));
}

TEST_CASE("models.json: unknown keys are refused, naming the entry and key", "[sizing][model_data]")
{
  const std::string top = error_of(edited([](auto& d) { d["modles"] = 1; }));
  CHECK(top.find("modles") != std::string::npos);
  const std::string entry = error_of(edited([](auto& d) { d["models"][0]["hidden_size"] = 4096; }));
  CHECK(entry.find("model llama-2-7b.hidden_size: unknown key") != std::string::npos);
  CHECK(entry.find("kv_heads") != std::string::npos);  // the known keys are listed
  const std::string quant = error_of(edited([](auto& d) {
    for (auto& m : d["models"]) {
      if (m.contains("quantized")) {
        m["quantized"][0]["bits"] = 4;
        break;
      }
    }
  }));
  CHECK(quant.find(".quantized[0].bits: unknown key") != std::string::npos);
}

TEST_CASE("models.json: bad types and missing keys are refused, naming the entry", "[sizing][model_data]")
{
  CHECK(error_of(edited([](auto& d) { d["models"][1]["layers"] = "40"; })).find("model llama-2-13b.layers: must be a whole number") !=
        std::string::npos);
  CHECK(error_of(edited([](auto& d) { d["models"][1]["layers"] = 40.5; })).find("no decimal point") != std::string::npos);
  CHECK(error_of(edited([](auto& d) { d["models"][1]["layers"] = -1; })).find("model llama-2-13b.layers") != std::string::npos);
  CHECK(error_of(edited([](auto& d) { d["models"][1]["hidden"] = 5000000000ULL; })).find("from 0 to 4294967295") !=
        std::string::npos);
  CHECK(error_of(edited([](auto& d) { d["models"][1]["tied_embeddings"] = 1; })).find("llama-2-13b.tied_embeddings: must be true or false") !=
        std::string::npos);
  CHECK(error_of(edited([](auto& d) { d["models"][1]["hf_ids"] = "meta-llama/Llama-2-13b-hf"; })).find("llama-2-13b.hf_ids: must be a list") !=
        std::string::npos);
  CHECK(error_of(edited([](auto& d) { d["models"][1]["dtype"] = nullptr; })).find("llama-2-13b.dtype: must be a string") !=
        std::string::npos);
  CHECK(error_of(edited([](auto& d) { d["models"][1].erase("source"); })).find("llama-2-13b.source: missing") != std::string::npos);
  CHECK(error_of(edited([](auto& d) { d["models"][1].erase("params"); })).find("llama-2-13b.params: missing") != std::string::npos);
  CHECK(error_of(edited([](auto& d) { d["models"][1].erase("name"); })).find("models[1].name") != std::string::npos);
  CHECK(error_of(edited([](auto& d) { d["models"][1]["kv_heads"] = 80; })).find("llama-2-13b.kv_heads") != std::string::npos);
  CHECK(error_of(edited([](auto& d) { d["models"].push_back(d["models"][0]); })).find("llama-2-7b") != std::string::npos);
  CHECK(error_of(edited([](auto& d) { d["models"][1]["aliases"] = {"LLAMA-2-7B"}; })).find("already names model llama-2-7b") !=
        std::string::npos);
  CHECK(error_of("{\"models\": 3}").find("\"models\" list") != std::string::npos);
  CHECK(error_of("not json").find("not JSON") != std::string::npos);
}

TEST_CASE("user models: a new model or one over a built-in entry", "[sizing][model_data]")
{
  const auto added = gpurent::user_model("my-llama",
                                         R"({"family": "llama", "hf_ids": ["me/my-llama"], "layers": 16, "hidden": 2048,
                                             "heads": 32, "kv_heads": 8, "head_dim": 64, "intermediate": 8192,
                                             "vocab": 128256, "tied_embeddings": true, "max_context": 131072,
                                             "dtype": "bfloat16"})");
  REQUIRE(added.has_value());
  CHECK(added->global_layers == 16);
  CHECK(added->params == gpurent::count_params(*gpurent::find_model("llama-3.2-1b")).total);  // the same shape
  CHECK(added->source == "the config file's [models.my-llama]");

  const auto over = gpurent::user_model("llama-3.1-8b", R"({"max_context": 8192})");
  REQUIRE(over.has_value());
  CHECK(over->max_context == 8192);
  CHECK(over->params == 8'030'261'248ULL);
  CHECK(over->hf_ids == gpurent::find_model("llama-3.1-8b")->hf_ids);
  CHECK(over->quantized.size() == gpurent::find_model("llama-3.1-8b")->quantized.size());

  const auto deeper = gpurent::user_model("llama-3.1-8b", R"({"layers": 16})");
  REQUIRE(deeper.has_value());
  CHECK(deeper->global_layers == 16);
  CHECK(deeper->params < 8'030'261'248ULL);  // counted again from the new shape

  const auto missing = gpurent::user_model("new-model", R"({"family": "llama"})");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message.find("model new-model.layers: missing") != std::string::npos);
  const auto clash = gpurent::user_model("mine", R"({"family": "llama", "hf_ids": ["meta-llama/Llama-3.1-8B"], "layers": 2,
                                                    "hidden": 64, "heads": 2, "kv_heads": 2, "head_dim": 32,
                                                    "intermediate": 128, "vocab": 100, "max_context": 4096})");
  REQUIRE_FALSE(clash.has_value());
  CHECK(clash.error().message.find("llama-3.1-8b") != std::string::npos);
  const auto unknown = gpurent::user_model("llama-3.1-8b", R"({"context": 8192})");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message.find("model llama-3.1-8b.context: unknown key") != std::string::npos);

  gpurent::install_user_models({*added, *over});
  CHECK(gpurent::model_catalog().size() == gpurent::builtin_model_catalog().size() + 1);
  REQUIRE(gpurent::find_model_ptr("my-llama") != nullptr);
  REQUIRE(gpurent::find_model_ptr("me/my-llama") != nullptr);
  CHECK(gpurent::find_model_ptr("llama-3.1-8b")->max_context == 8192);
  gpurent::install_user_models({});
  CHECK(gpurent::model_catalog().size() == gpurent::builtin_model_catalog().size());
  CHECK(gpurent::find_model_ptr("my-llama") == nullptr);
  CHECK(gpurent::find_model_ptr("llama-3.1-8b")->max_context == 131072);
}
