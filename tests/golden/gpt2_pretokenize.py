#!/usr/bin/env python3
# ===- gpt2_pretokenize.py - GPT-2's tokenizer as the reference for BpeTokenizer -===#
#
# GPT-2's own encoding (openai/gpt-2, src/encoder.py): its pattern run by the
# `regex` module (Debian's python3-regex) over decoded text, each word's UTF-8
# bytes mapped to GPT-2's printable characters, then merged by rank. The
# vocabulary and the cases live in one place, tests/unit/io/TextTest.cpp (the
# merges between the "gpt2_pretokenize merges" markers, the cases as
# {"text", {ids}} entries between the "gpt2_pretokenize cases" markers); this
# script re-derives every case's ids and compares them with the ones written
# there, which the C++ test compares with BpeTokenizer's. Two links of one
# chain: GPT-2 == the written ids == Sinter.
#
#   /usr/bin/python3 tests/golden/gpt2_pretokenize.py tests/unit/io/TextTest.cpp
#       checks (the golden.gpt2_pretokenize test)
#   /usr/bin/python3 tests/golden/gpt2_pretokenize.py tests/unit/io/TextTest.cpp --print
#       prints the cases' lines with the reference ids, to paste into the test
import re
import sys

import regex

PATTERN = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def bytes_to_unicode():
    """GPT-2's map of the 256 bytes to printable characters (encoder.py)."""
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) +
          list(range(ord("®"), ord("ÿ") + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def bpe(token, ranks):
    """GPT-2's merge loop (encoder.py's Encoder.bpe): the lowest-ranked pair, every occurrence."""
    word = tuple(token)
    while len(word) > 1:
        pairs = set(zip(word, word[1:]))
        bigram = min(pairs, key=lambda pair: ranks.get(pair, float("inf")))
        if bigram not in ranks:
            break
        first, second = bigram
        merged, i = [], 0
        while i < len(word):
            try:
                j = word.index(first, i)
            except ValueError:
                merged.extend(word[i:])
                break
            merged.extend(word[i:j])
            i = j
            if word[i] == first and i < len(word) - 1 and word[i + 1] == second:
                merged.append(first + second)
                i += 2
            else:
                merged.append(word[i])
                i += 1
        word = tuple(merged)
    return word


def between(source, name):
    match = re.search(r"// BEGIN " + name + r"\n(.*?)// END " + name, source, re.S)
    if not match:
        sys.exit(f"gpt2_pretokenize: no '// BEGIN {name}' ... '// END {name}' block")
    return match.group(1)


def unescape(literal):
    """The C++ string literal's text: UTF-8 as written, and \\uXXXX, \\n, \\t, \\\\, \\"."""
    simple = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}
    return re.sub(r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)",
                  lambda m: chr(int(m.group(1)[1:], 16)) if len(m.group(1)) > 1
                  else simple[m.group(1)], literal)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: gpt2_pretokenize.py TextTest.cpp [--print]")
    source = open(sys.argv[1], encoding="utf-8").read()
    merges = [tuple(line.split(" ")) for line in
              between(source, "gpt2_pretokenize merges").splitlines()
              if line and not line.startswith("#") and not line.startswith("const")
              and not line.startswith(")")]
    byte_encoder = bytes_to_unicode()
    # The vocabulary the C++ test writes: the 256 bytes in GPT-2's order
    # (the printable ones first), then one token per merge.
    tokens = sorted(byte_encoder.values(), key=lambda ch: (ord(ch) >= 256, ord(ch)))
    tokens += [left + right for left, right in merges]
    encoder = {token: i for i, token in enumerate(tokens)}
    ranks = {merge: rank for rank, merge in enumerate(merges)}

    def encode(text):
        ids = []
        for word in PATTERN.findall(text):
            token = "".join(byte_encoder[b] for b in word.encode("utf-8"))
            ids.extend(encoder[piece] for piece in bpe(token, ranks))
        return ids

    cases = re.findall(r'\{"((?:[^"\\]|\\.)*)",\s*\{([0-9,\s]*)\}\}',
                       between(source, "gpt2_pretokenize cases"))
    if not cases:
        sys.exit("gpt2_pretokenize: no cases found")
    if "--print" in sys.argv:
        for literal, _ in cases:
            ids = ", ".join(map(str, encode(unescape(literal))))
            print(f'    {{"{literal}", {{{ids}}}}},')
        return
    failed = 0
    for literal, written in cases:
        text = unescape(literal)
        expected = encode(text)
        got = [int(x) for x in re.sub(r"\s", "", written).split(",") if x]
        words = PATTERN.findall(text)
        if got == expected:
            print(f"CASE OK  {literal!s:32}  {len(words)} words, {len(expected)} ids")
        else:
            failed += 1
            print(f"CASE FAILED  {literal}\n  words     {words}\n  GPT-2     {expected}\n"
                  f"  TextTest  {got}")
    print(f"{len(cases) - failed} of {len(cases)} cases agree with GPT-2's tokenizer")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
