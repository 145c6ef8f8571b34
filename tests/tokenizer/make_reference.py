#!/usr/bin/env python3
"""Writes tests/tokenizer/reference_ids.json: token ids of the real SmolLM2 model's
tokenizer, from an independent implementation (Hugging Face `tokenizers`), and
the model's chat template rendered by Jinja, for tests/test_tokenizer.cpp.

The tokenizer is rebuilt from the GGUF file's own vocabulary, merges and token
types (read with the `gguf` package) the way SmolLM2's tokenizer.json defines it:
BPE with ranked merges; pre-tokenizer Digits(individual_digits) then
ByteLevel(add_prefix_space=False) with the GPT-2 regex; control tokens added as
special tokens. The strings are generated here, deterministically.

It also writes tests/tokenizer/pre_tokenizer_ids.json: the same vocabulary and
merges under each other byte-level pre-tokenizer the library knows (Llama 3's
and Qwen2's regexes, as their tokenizer.json files define them: Split(regex,
isolated) then ByteLevel without its own regex; Llama 3's BPE with
ignore_merges), so each regex is checked on every string, not only SmolLM2's.

Run: build/pyenv/bin/python tests/tokenizer/make_reference.py [model.gguf]
(default: SmolLM2-135M-Instruct.Q4_1.gguf in $TORSH_MODEL_DIR, else
$XDG_CACHE_HOME/torsh/models, else ~/.cache/torsh/models, as torsh::model::find_model).
"""
import json
import os
import random
import sys

import jinja2
import jinja2.sandbox
from gguf import GGUFReader
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_ids.json")
PRE_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pre_tokenizer_ids.json")
# The regexes of the tokenizer.json files (Meta-Llama-3-8B, Qwen2.5-0.5B).
REGEXES = {
    "llama3": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
              r"\s*[\r\n]+|\s+(?!\S)|\s+",
    "qwen2": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
             r"\s*[\r\n]+|\s+(?!\S)|\s+",
}


def model_path():
    if len(sys.argv) > 1:
        return sys.argv[1]
    folder = os.environ.get("TORSH_MODEL_DIR")
    if not folder:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
        folder = os.path.join(cache, "torsh", "models")
    return os.path.join(folder, MODEL_FILE)


def hf_tokenizer(reader):
    field = lambda key: reader.fields[key].contents()
    tokens, types, merges = field("tokenizer.ggml.tokens"), field("tokenizer.ggml.token_type"), field("tokenizer.ggml.merges")
    assert field("tokenizer.ggml.model") == "gpt2" and field("tokenizer.ggml.pre") == "smollm"
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab, [tuple(m.split(" ", 1)) for m in merges]))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    # Control (3) and user-defined (4) tokens are matched verbatim before pre-tokenizing.
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t, ty in zip(tokens, types) if ty in (3, 4)])
    return tok, field


def regex_tokenizer(reader, name):
    """SmolLM2's vocabulary and merges under the `name` pre-tokenizer."""
    field = lambda key: reader.fields[key].contents()
    tokens, types, merges = field("tokenizer.ggml.tokens"), field("tokenizer.ggml.token_type"), field("tokenizer.ggml.merges")
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab, [tuple(m.split(" ", 1)) for m in merges], ignore_merges=name == "llama3"))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(REGEXES[name]), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t, ty in zip(tokens, types) if ty in (3, 4)])
    return tok


def fixed_strings():
    return [
        "", " ", "  ", "\n", "\t", "Hello", "Hello world", " Hello world", "Hello, world!", "hello  world",
        "The quick brown fox jumps over the lazy dog.", "THE QUICK BROWN FOX", "I'm here, you're there; it's theirs.",
        "He's, she'd, we'll, they've, I'M, YOU'RE, IT'S, 'S 'T 'RE", "'s't're've'm'll'd", "don't stop 'til",
        "trailing spaces   ", "   leading spaces", "tabs\tand\t\ttabs", "line\nbreaks\n\nand\r\nCRLF\r\n",
        "mixed \t \n  \n\t spaces", "a\u00a0b\u2009c\u3000d\u2028e\u2029f\u0085g\u200bh\ufeffi", "  \u00a0  x",
        "0", "7", "12", "123", "1234567890", "3.14159", "-42", "1,000,000", "2024-11-24", "x=10;y=20",
        "99 bottles", "v1.2.3", "０１２", "٣٤٥", "१२३", "Ⅻ and ½ and ²", "numbers  123  and   4567  ",
        "!!!", "...", "?!?!", "a--b", "(hello)", "[1, 2, 3]", "{\"key\": \"value\"}", "@user #tag $100 %50 ^ & * ~",
        "emails: someone@example.com, urls: https://example.org/path?q=1&r=2#frag",
        "Café naïve résumé", "Cafe\u0301 nai\u0308ve", "Ünïcödé ÀÉÎÕÜ", "ß ẞ ǅ ǈ", "Straße",
        "你好，世界！", "日本語のテキストです。", "한국어 텍스트", "中文和English混合",
        "😀", "😀😃😄", "👍🏽", "👨‍👩‍👧‍👦 family", "🏳️‍🌈", "🇫🇷🇩🇪", "emoji 🎉 in text 🚀!",
        "مرحبا بالعالم", "Привет, мир!", "Ελληνικά", "עברית", "हिन्दी", "ไทย", "Tiếng Việt",
        "e\u0301\u0302\u0303", "\u0301start with a mark", "a\u20dd", "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇",
        "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|im_start|>user\nHi<|im_end|>\n",
        "text<|im_end|>more", "<|im_start|><|im_end|>", "<|im_start", "<|im_start|x", "< |im_start|>",
        "<repo_name>torsh<file_sep>main.cpp<filename>", "<jupyter_code>print(1)<jupyter_output>1<empty_output>",
        "<|endoftext|><|endoftext|>", " <|im_start|> ", "a<|im_start|>b",
        # Bytes SmolLM2's vocabulary has no token for (0x04, the UTF-8 lead bytes
        # 0xF1 and 0xF2): both tokenizers drop them.
        "a\x04b", "ctrl \x06\x13\x14\x16\x1d end", "\U00040000", "x\U0008ffff y", "\U000e0041 tag",
    ]


CODE = [
    "def add(a, b):\n    return a + b\n",
    "import os\nfor i in range(10):\n    print(f\"{i:03d}\", os.getcwd())\n",
    "class Foo(Bar):\n    def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)\n",
    "#include <vector>\n\nint main() {\n  std::vector<int> v{1, 2, 3};\n  return v.size() > 2 ? 0 : 1;\n}\n",
    "template <typename T>\nT max(T a, T b) { return a < b ? b : a; }  // comment\n",
    "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
    "{\n  \"name\": \"torsh\",\n  \"version\": \"0.1.0\",\n  \"tags\": [\"a\", \"b\"],\n  \"n\": 12345\n}",
    "SELECT id, name FROM users WHERE age >= 18 ORDER BY name;",
    "if x != None and y is not None:\n\t\tpass\n\n\n",
    "    indented four\n        indented eight\n\t\ttabbed\n",
    "a = [x**2 for x in range(100) if x % 3 == 0]",
    "std::unique_ptr<Foo> p = std::make_unique<Foo>(42);",
    "console.log(`template ${value} string`);",
    "<html><body><p class=\"x\">Hi &amp; bye</p></body></html>",
]

WORDS = ["the", "The", "model", "token", "tokenizer", " ", "  ", "\n", "\t", "'s", "'re", "'S", "n't", "123", "4",
         "3.5", "2024", "!", "?", ",", ".", "...", "--", "(", ")", "\"", "'", "é", "ñ", "ü", "日本", "中文", "😀",
         "👨‍💻", "Привет", "مرحبا", "\u00a0", "\u3000", "<|im_start|>", "<|im_end|>", "x", "y_z", "CamelCase",
         "snake_case", "HTTP", "don't", "you'll", "  \n", " \t ", "ﬁ", "Ω", "µ", "∑", "→", "©"]


def generated_strings(count):
    rng = random.Random(20241124)
    out = []
    for _ in range(count):
        n = rng.randint(1, 12)
        s = ""
        for _ in range(n):
            w = rng.choice(WORDS)
            s += w if rng.random() < 0.5 else " " + w
        out.append(s)
    return out


def long_strings():
    rng = random.Random(7)
    return [
        "".join(rng.choice("0123456789") for _ in range(200)),
        " " * 50 + "end",
        "word " * 60,
        "\n" * 20 + "x" + "\t" * 10,
        "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(100)),
        "".join(chr(rng.randint(0x20, 0x7E)) for _ in range(300)),
        "".join(chr(rng.randint(0xA0, 0x2FF)) for _ in range(150)),
        "a" * 100,
        "!" * 64,
    ]


CONVERSATIONS = [
    [{"role": "user", "content": "Hello!"}],
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "What is 2+2?"}],
    [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"},
     {"role": "user", "content": "Tell me a joke.\nMake it short."}],
    [{"role": "user", "content": "  spaces around  \n"}],
    [{"role": "user", "content": "Unicode: café 日本 😀"}],
]


def render_chats(template, bos, eos):
    # As transformers renders chat templates: a sandbox with trim_blocks and lstrip_blocks.
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    t = env.from_string(template)
    return [{"messages": m, "add_generation_prompt": g,
             "text": t.render(messages=m, add_generation_prompt=g, bos_token=bos, eos_token=eos)}
            for m in CONVERSATIONS for g in (True, False)]


def byte_chars():
    """GPT-2's byte -> character map (bytes_to_unicode)."""
    kept = [b for b in range(256) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF]
    moved = [b for b in range(256) if b not in kept]
    return {**{b: chr(b) for b in kept}, **{b: chr(256 + i) for i, b in enumerate(moved)}}


def main():
    reader = GGUFReader(model_path())
    tok, field = hf_tokenizer(reader)
    tokens = field("tokenizer.ggml.tokens")
    chats = render_chats(field("tokenizer.chat_template"), tokens[field("tokenizer.ggml.bos_token_id")],
                         tokens[field("tokenizer.ggml.eos_token_id")])
    strings = fixed_strings() + CODE + long_strings() + generated_strings(260) + [c["text"] for c in chats]
    vocab, chars = set(tokens), byte_chars()
    cases = []
    for s in strings:
        ids = tok.encode(s, add_special_tokens=False).ids
        case = {"text": s, "ids": ids}
        kept = bytes(b for b in s.encode() if chars[b] in vocab)
        if kept == s.encode():
            # Round trip: the byte-level decoder gives the text back, special tokens included.
            assert tok.decode(ids, skip_special_tokens=False) == s, repr(s)
            case["decoded_without_special"] = tok.decode(ids, skip_special_tokens=True)
        else:
            # The bytes that are left (Hugging Face's decoder would replace the
            # broken UTF-8 they may form with U+FFFD).
            case["decoded_hex"] = kept.hex()
        cases.append(case)
    doc = {
        "model": MODEL_FILE,
        "generator": "tests/tokenizer/make_reference.py (Hugging Face tokenizers + jinja2)",
        "cases": cases,
        "chats": chats,
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(f"{len(cases)} strings, {len(chats)} chats -> {OUT} ({os.path.getsize(OUT)} bytes)")
    plain = fixed_strings() + CODE + long_strings() + generated_strings(260)
    pre = {"generator": "tests/tokenizer/make_reference.py (Hugging Face tokenizers)", "vocabulary": MODEL_FILE}
    for name in REGEXES:
        tok = regex_tokenizer(reader, name)
        pre[name] = [{"text": t, "ids": tok.encode(t, add_special_tokens=False).ids} for t in plain]
    with open(PRE_OUT, "w", encoding="utf-8") as f:
        json.dump(pre, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(f"{len(plain)} strings per pre-tokenizer ({', '.join(REGEXES)}) -> {PRE_OUT}")


if __name__ == "__main__":
    main()
