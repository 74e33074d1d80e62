"""Extract Ollama CLI flags (cmd/cmd.go cobra flags), server env vars (envconfig/config.go AsMap)
and Modelfile instructions / PARAMETER names (parser/parser.go, api/types.go) from the ollama mirror."""
import re
import sys

from common import flag, show, tag_commit, write

MIRROR = "ollama+ollama"
TAG = sys.argv[1] if len(sys.argv) > 1 else "v0.32.15"

FLAG_RE = re.compile(r'(\w+)\.(?:Persistent)?Flags\(\)\.(Bool|String|Int|Uint|Float32|Float64|Duration|StringArray|'
                     r'StringSlice|Int64|Uint64)(P?)(Var)?\(\s*(?:&\w+\s*,\s*)?"([\w-]+)"\s*,\s*(?:"(\w)"\s*,)?')


def main():
    commit = tag_commit(MIRROR, TAG)
    cmd = show(MIRROR, TAG, "cmd/cmd.go")
    uses = dict(re.findall(r'(\w+)\s*:=\s*&cobra\.Command\{\s*Use:\s*"([\w-]+)', cmd))
    nooptdef = set(re.findall(r'Lookup\("([\w-]+)"\)\.NoOptDefVal', cmd))
    flags = {}
    for var, typ, p, _var, name, short in FLAG_RE.findall(cmd):
        command = "ollama" if uses.get(var) == "ollama" else "ollama " + uses.get(var, var)
        key = "--" + name
        takes_value = typ != "Bool"
        entry = {"aliases": ["-" + short] if short else [], "takes_value": takes_value, "type": typ.lower()}
        if name in nooptdef:
            entry["takes_value"], entry["value_optional"] = False, True
        if typ == "Bool":
            entry["value_optional"] = True  # pflag bools accept --flag=false
        d = flags.setdefault(key, flag([], entry["takes_value"], None, commands={}))
        d["commands"][command] = entry
    # aliases: only those shared by every command using the flag (e.g. -v is --version on `ollama`,
    # --verbose on `ollama show`)
    for d in flags.values():
        sets = [set(e["aliases"]) for e in d["commands"].values()]
        d["aliases"] = sorted(set.intersection(*sets)) if sets else []
        d["takes_value"] = any(e["takes_value"] for e in d["commands"].values())
    flags["--think"]["choices"] = ["true", "false", "high", "medium", "low"]

    envsrc = show(MIRROR, TAG, "envconfig/config.go")
    env = {k: d for k, _v, d in re.findall(
        r'"(OLLAMA_\w+|LLAMA_ARG_\w+)":\s*\{"\1",\s*(.*?),\s*"((?:[^"\\]|\\.)*)"\},?\n', envsrc)}
    env = {k: v.replace('\\"', '"') for k, v in env.items()}
    # value domains read in the source
    ggml = show(MIRROR, TAG, "fs/ggml/ggml.go")
    kv = re.search(r'func \(f GGML\) SupportsKVCacheType.*?slices\.Contains\(\[\]string\{([^}]*)\}', ggml, re.S)
    kv_types = ["f16"] + re.findall(r'"(\w+)"', kv.group(1))
    env_values = {
        "OLLAMA_KV_CACHE_TYPE": kv_types,
        "OLLAMA_FLASH_ATTENTION": "strconv.ParseBool (1,t,T,TRUE,true,True,0,f,F,FALSE,false,False); "
                                  "an unparsable value counts as true; unset -> model default",
        "OLLAMA_SCHED_SPREAD": "strconv.ParseBool",
        "OLLAMA_CONTEXT_LENGTH": "uint (tokens); 0/unset -> 4k/32k/256k by VRAM",
        "OLLAMA_NUM_PARALLEL": "uint, default 1",
    }
    parser = show(MIRROR, TAG, "parser/parser.go")
    valid = re.search(r'func isValidCommand\(cmd string\) bool \{.*?case ([^:]*):', parser, re.S).group(1)
    instructions = [s.upper() for s in re.findall(r'"(\w+)"', valid)]
    types = show(MIRROR, TAG, "api/types.go")
    params = []
    for struct in ("Options", "Runner"):
        body = re.search(r"type %s struct \{(.*?)\n\}" % struct, types, re.S).group(1)
        params += re.findall(r'json:"(\w+)[,"]', body)
    notes = (
        f"Ollama {TAG} (newest final tag in the mirror; v0.33.0-rc0..rc2 are pre-releases). "
        "`ollama serve` has NO command-line flags: it is configured only through env vars (see env; "
        "serve's --help lists OLLAMA_DEBUG, OLLAMA_HOST, OLLAMA_CONTEXT_LENGTH, OLLAMA_KEEP_ALIVE, "
        "OLLAMA_MAX_LOADED_MODELS, OLLAMA_MAX_QUEUE, OLLAMA_MODELS, OLLAMA_NUM_PARALLEL, OLLAMA_SCHED_SPREAD, "
        "OLLAMA_FLASH_ATTENTION, OLLAMA_KV_CACHE_TYPE, OLLAMA_GPU_OVERHEAD, OLLAMA_LOAD_TIMEOUT, ...). "
        "Flags are cobra/pflag: per-command (see flags.<f>.commands); `-v` is --version on `ollama` but "
        "--verbose on `ollama show`. Bool flags accept --flag=false. "
        f"OLLAMA_KV_CACHE_TYPE values accepted: {', '.join(kv_types)} (GGML.SupportsKVCacheType; a quantized "
        "KV cache needs flash attention). Modelfile: instructions " + ", ".join(instructions) +
        "; `PARAMETER <name> <value>` with name one of modelfile_parameters (api.Options + api.Runner json tags), "
        "e.g. PARAMETER num_ctx 8192, PARAMETER num_gpu 20 (layers offloaded to GPU). "
        "`ollama create NAME -f Modelfile`; `ollama create -q/--quantize q4_K_M`."
    )
    write("ollama", TAG, commit, "https://github.com/ollama/ollama",
          ["cmd/cmd.go", "envconfig/config.go", "fs/ggml/ggml.go", "parser/parser.go", "api/types.go"],
          sorted({c for d in flags.values() for c in d["commands"]}), flags, env, notes,
          env_values=env_values, modelfile_instructions=instructions, modelfile_parameters=params)


if __name__ == "__main__":
    main()
