"""A GGUF file's logits and greedy text against the PyTorch forward over the
gguf package's own dequantization (torch_model.py), for files made outside
the test set-up (llama-quantize's K-quant files of the cached SmolLM2):

    python tests/model/check_file.py FILE.gguf [--backend cpu] [--activations int16]

Prints the max relative logit error over a 64-token prompt (per position:
max |ours - ref| / max |ref|), then for each prompt whether 32 greedy tokens
equal the reference's. Where they part, it prints the reference's margin
between its top two logits at that step beside our error there: a margin
below the error is a tie within the bound, not a wrong token.
"""

import argparse
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
from torch_model import TorchModel  # noqa: E402
from test_model import PASSAGE, PROMPTS, relative_errors  # noqa: E402

import torsh_backend as tb  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--activations", default="int16")
    p.add_argument("--tokens", type=int, default=32)
    a = p.parse_args()
    m = tb.Model.load(a.file, ctx=512, backend=a.backend, activations=a.activations)
    ref = TorchModel(a.file)
    ids = m.tokenizer.encode(PASSAGE)[:64]
    ref.reset()
    err = relative_errors(m.logits(ids), ref.forward(ids).numpy())
    print(f"{pathlib.Path(a.file).name} on {a.backend}: max relative logit error over 64 positions {err.max():.2e}")
    equal = 0
    for prompt in PROMPTS:
        pid = m.tokenizer.encode(prompt)
        gen = m.generate(prompt, max_tokens=a.tokens)
        "".join(gen)  # runs the generation
        ours = list(gen.tokens)
        assert len(ours) == a.tokens or ours[-1] in m.tokenizer.stop_tokens, "generation ended early"
        want = ref.greedy(pid, a.tokens)
        n = len(ours)
        if ours == want[:n]:
            equal += 1
            print(f"  {prompt[:24]!r}: {n} greedy tokens equal")
            continue
        i = next(j for j in range(n) if ours[j] != want[j])
        # Both forwards over the reference's own continuation up to the step where they part.
        seq = pid + want[:i]
        ref.reset()
        r = ref.forward(seq).numpy()[-1]
        o = m.logits(seq)[-1]
        top = np.sort(r)[-2:]
        print(f"  {prompt[:24]!r}: part at token {i}: reference margin {top[1] - top[0]:.4f}, "
              f"our largest difference there {np.abs(o - r).max():.4f} (of max |logit| {np.abs(r).max():.2f})")
    print(f"  {equal} of {len(PROMPTS)} prompts: greedy text equal")


if __name__ == "__main__":
    main()
