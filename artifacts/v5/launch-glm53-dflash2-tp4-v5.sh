#!/usr/bin/env bash
# launch-glm53-dflash2-tp4-v5.sh — the "v5" champion serving config.
#
# zai-org/GLM-5.3-Flash with the DFlash2 drafter spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark
# (K=7 speculative tokens), vLLM tensor parallel 4 across 4 DGX Spark (GB10) nodes, one GPU
# per node, NCCL over the ConnectX-7 RoCE link. Multi-node "mp" executor: the same
# `vllm serve` runs on every node with its own --node-rank; workers run --headless.
#
# Usage (on the head node, ranks 1-3 reachable over ssh, this script at the same path on
# every node):
#   ./launch-glm53-dflash2-tp4-v5.sh            # gate clocks, start workers 1-3, then the head
#   ./launch-glm53-dflash2-tp4-v5.sh worker R   # what the head runs on node R over ssh
#
# Launch order matters: workers (node ranks 1-3) first, head (rank 0) last — the head is
# the rendezvous master and times out if workers join too late.
#
# Boot takes ~15-20 min (weight load on 4 nodes, NCCL bring-up, KV profiling). Don't kill
# it early; poll http://HEAD:8000/health.
#
# GB10 DVFS: clocks can get stuck low and only a power-cycle fixes it. Idle clocks look fine
# even when stuck, so gate every bench (and this launch) with a matmul-rate check on every
# node — see gate_matmul_rate below. Never trust idle clocks.
set -euo pipefail

# --- cluster ----------------------------------------------------------------------------
HEAD_ADDR="${HEAD_ADDR:-10.100.0.11}"                                   # rank 0, RoCE address
read -r -a WORKERS <<< "${WORKER_ADDRS:-10.100.0.12 10.100.0.13 10.100.0.14}"  # ranks 1, 2, 3
MASTER_PORT="${MASTER_PORT:-29501}"
API_PORT="${API_PORT:-8000}"
VLLM_VENV="${VLLM_VENV:-$HOME/vllm/.venv}"
LOG_DIR="${LOG_DIR:-$HOME/logs/glm53-v5}"
SCRIPT="$(readlink -f "${BASH_SOURCE[0]}")"

# --- model --------------------------------------------------------------------------------
TARGET_MODEL="${TARGET_MODEL:-zai-org/GLM-5.3-Flash}"
GPU_MEMORY_UTILIZATION="${GPU_MEMORY_UTILIZATION:-0.85}"
MAX_NUM_SEQS="${MAX_NUM_SEQS:-8}"
# Minimum sustained BF16 matmul rate per node; a DVFS-stuck GB10 measures far below this.
MIN_MATMUL_TFLOPS="${MIN_MATMUL_TFLOPS:-70}"

# --- RoCE / NCCL / Gloo --------------------------------------------------------------------
export NCCL_SOCKET_IFNAME="${NCCL_SOCKET_IFNAME:-enp1s0f0np0}"
export GLOO_SOCKET_IFNAME="${GLOO_SOCKET_IFNAME:-enp1s0f0np0}"
export NCCL_IB_HCA="${NCCL_IB_HCA:-rocep1s0f0,roceP2p1s0f0}"
export NCCL_IB_DISABLE=0
export NCCL_IB_GID_INDEX="${NCCL_IB_GID_INDEX:-3}"   # RoCE v2 GID
export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"

# shellcheck source=/dev/null
source "$VLLM_VENV/bin/activate"
mkdir -p "$LOG_DIR"

gate_matmul_rate() {
  # Time a large BF16 matmul and refuse to continue below MIN_MATMUL_TFLOPS.
  python - "$MIN_MATMUL_TFLOPS" <<'PY'
import sys, time, torch
floor = float(sys.argv[1])
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    a @ b
torch.cuda.synchronize()
n, t0 = 20, time.perf_counter()
for _ in range(n):
    a @ b
torch.cuda.synchronize()
tflops = 2 * 8192**3 * n / (time.perf_counter() - t0) / 1e12
print(f"matmul rate {tflops:.1f} TFLOPS (floor {floor})")
sys.exit(0 if tflops >= floor else "DVFS stuck? matmul rate below floor - power-cycle this node")
PY
}

serve() {
  # $1 = node rank, $2 = this node's RoCE address; further args (--headless) appended.
  local rank="$1" host_ip="$2"
  shift 2
  export VLLM_HOST_IP="$host_ip"
  # --enforce-eager: PIECEWISE CUDA graphs regressed -10-20% in every cell (v4 evidence,
  #   glm53-v4-cudagraphs.json). Falsified — don't retry.
  # --max-num-batched-tokens 7168: chunk clamp 2048 -> 7168 removes the 8k-prefill cliff.
  # TRITON_ATTN collapses DFlash acceptance here; leave the attention backend on auto.
  exec vllm serve "$TARGET_MODEL" \
    --host 0.0.0.0 \
    --port "$API_PORT" \
    --distributed-executor-backend mp \
    --nnodes 4 \
    --node-rank "$rank" \
    --master-addr "$HEAD_ADDR" \
    --master-port "$MASTER_PORT" \
    --tensor-parallel-size 4 \
    --enforce-eager \
    --max-num-batched-tokens 7168 \
    --max-num-seqs "$MAX_NUM_SEQS" \
    --speculative-config '{"method":"dflash","model":"spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark","num_speculative_tokens":7}' \
    --kv-cache-dtype fp8_e4m3 \
    --block-size 2304 \
    --max-model-len 262144 \
    --moe-backend marlin \
    --gpu-memory-utilization "$GPU_MEMORY_UTILIZATION" \
    "$@"
}

case "${1:-head}" in
  worker)
    rank="${2:?usage: $0 worker RANK}"
    gate_matmul_rate
    serve "$rank" "${WORKERS[rank - 1]}" --headless
    ;;
  head)
    gate_matmul_rate
    for rank in 1 2 3; do
      addr="${WORKERS[rank - 1]}"
      echo "starting worker rank $rank on $addr"
      ssh "$addr" "mkdir -p '$LOG_DIR' && nohup '$SCRIPT' worker $rank > '$LOG_DIR/worker-rank$rank.log' 2>&1 &"
    done
    # Give the workers time to pass their matmul gate and reach the rendezvous.
    sleep "${WORKER_GRACE_SECONDS:-60}"
    echo "starting head (rank 0) on $HEAD_ADDR; boot takes ~15-20 min"
    serve 0 "$HEAD_ADDR" 2>&1 | tee "$LOG_DIR/head-rank0.log"
    ;;
  *)
    echo "usage: $0 [head | worker RANK]" >&2
    exit 2
    ;;
esac
