#!/usr/bin/env python3
"""The checks of the chapters' own options (chapters 11, 14, 15 and 16, and chapter 16's names).

Each bad value or file is one line on stderr naming the problem, exit status 2 and nothing
on stdout, like every other bad input (tools/checks/check_bad_input.py checks the common options
only); tools/checks/one_line_refusal.py gives the verdict. A default that no longer fits the
reader's numbers is no error: the run succeeds and one note line on stderr says so. The
script writes each bad file itself into a temporary folder.

Usage: check_options.py --chapter N --list
       check_options.py --chapter N --program PROGRAM --case NAME [--model FILE]
"""

import argparse
import os
import subprocess
import sys
import tempfile

from one_line_refusal import verdict

KJV_LIKE = b"the quick brown fox jumps over the lazy dog\n" * 20  # an own text of 20 lines


class Folder:
    """A temporary folder the bad files are written into."""

    def __init__(self, write=True):
        self.root = tempfile.mkdtemp() if write else ""
        self.write = write

    def path(self, name, data=None):
        """The path of a file in the folder, written with data unless data is None (or the folder
        only names its cases)."""
        full = os.path.join(self.root, name)
        if data is not None and self.write:
            with open(full, "wb") as out:
                out.write(data)
        return full


def ch11_cases(folder, program, model):
    """Chapter 11's --upstream: (arguments, fragment, status) by case."""
    del folder, program, model  # every case is on the command line
    return {
        "wrong-shape": (["--upstream", "1,0,0;0,0,0;0,0,0"], "dO must have the shape of the outputs O, 3×2 (one row "
                        "per token, one column per value feature), got 3×3", 2),
        "default-no-longer-fits": (["--tokens", "A,B", "--embeddings", "1,0;0,1"],
                                   "note: using --upstream 0,1;0,0, as its default does not fit your numbers", 0),
        "default-one-feature": (["--embeddings", "1;2"], "note: using the identity for W_Q (1×1), W_K (1×1) and "
                                "W_V (1×1), and --upstream 1;0, as their defaults do not fit your numbers", 0),
        "not-a-matrix": (["--upstream", "0,1;0,y;0,0"], "--upstream row 2: \"0,y\": \"y\" is not a number", 2),
    }


def ch14_cases(folder, program, model):
    """Chapter 14's --text, --load, --eval, --heads and --steps: (arguments, fragment, status) by case."""
    del model  # the cases that need a model train their own
    own = folder.path("own.txt", KJV_LIKE)
    trained = folder.path("own.safetensors")
    return {
        "empty": (["--text", folder.path("empty.txt", b"")], "the file is empty"),
        "one-character": (["--text", folder.path("a.txt", b"a" * 500)], "holds one distinct character ('a')"),
        "not-text": (["--text", folder.path("b.bin", bytes(range(256)) * 4)],
                     "byte 0x00 on line 1 is not plain ASCII; the model reads ASCII text only"),
        "few-lines": (["--text", folder.path("short.txt", b"ab\ncd\n")], "the text has 2 lines; it needs at least 10"),
        "held-out-outside": (["--text", folder.path("z.txt", KJV_LIKE[:9 * 44] + b"Zhe" + KJV_LIKE[9 * 44 + 3:])],
                             "holds 'Z' on its line 1, which the training text never uses"),
        "no-file": (["--text", folder.path("missing.txt")], "--text: cannot read the file"),
        "wrong-vocabulary": (["--load", trained], "the model's vocabulary has"),
        "truncated-model": (["--text", own, "--load", lambda saved: folder.path("cut.safetensors", saved[:-100])],
                            "bytes of data after the header, but its tensors need"),
        "corrupt-model": (["--text", own, "--load",
                           lambda saved: folder.path("bad.safetensors", saved[:8] + b"!" + saved[9:])],
                          "the header is not valid JSON"),
        "eval-outside": (["--text", own, "--load", trained, "--eval", folder.path("e.txt", b"Zebra")],
                         "'Z' on line 1 is not in the vocabulary"),
        "eval-empty": (["--steps", "0", "--eval", folder.path("e0.txt", b"")],
                       "e0.txt: the file is empty, nothing to predict; give at least two characters"),
        "eval-one": (["--steps", "0", "--eval", folder.path("e1.txt", b"A")],
                     "e1.txt: one character, nothing to predict; give at least two characters"),
        "heads": (["--heads", "3"], "--heads: 3 heads do not cut d = 64 into slices of an even width"),
        "steps": (["--steps", "6000"], "--steps: expected a whole number from 0 to 5000"),
    }


CH14_NEEDS_A_MODEL = ("wrong-vocabulary", "truncated-model", "corrupt-model", "eval-outside")


def ch15_cases(folder, program, model):
    """Chapter 15's --layers, --heads, --steps, --text, --load and --sequence: (arguments, fragment) by
    case. The --sequence cases (the chapter page's panel) score the model chapter 15 saved at build time."""
    del program
    return {
        "sequence-without-model": (["--sequence", "abc"], "--sequence: needs --load FILE"),
        "sequence-short": (["--load", model, "--sequence", "a"], "--sequence: expected 2 to 32 characters"),
        "sequence-long": (["--load", model, "--sequence", "a" * 33], "--sequence: expected 2 to 32 characters"),
        "sequence-outside": (["--load", model, "--sequence", "Xerxes @ home"],
                             "the characters 'X', '@' are not in the model's vocabulary"),
        "layers-zero": (["--layers", "0"], "--layers: expected a whole number from 1 to 4"),
        "layers-many": (["--layers", "9"], "--layers: expected a whole number from 1 to 4"),
        "heads": (["--heads", "3"], "--heads: 3 heads do not cut d = 64 into slices of an even width"),
        "steps": (["--steps", "6000"], "--steps: expected a whole number from 0 to 5000"),
        "few-letters": (["--text", folder.path("abc.txt", b"abc abc abc, cab bac\n" * 200)],
                        "distinct letters (A-Z, a-z); the test sequences need 32"),
        "no-file": (["--load", folder.path("missing.safetensors")], "--load: cannot read the file"),
        "not-a-model": (["--load", folder.path("bad.safetensors", b"12345678{not json")], "--load"),
    }


def ch16_cases(folder, program, model):
    """Chapter 16's --temperature, --top-k, --prompt, --length and --load, on the model chapter 14
    saved: (arguments, fragment) by case."""
    del program
    cut = (lambda saved: folder.path("cut.safetensors", saved[:-100]))
    bad = (lambda saved: folder.path("bad.safetensors", saved[:8] + b"!" + saved[9:]))
    return {
        "temperature-zero": (["--temperature", "0"], "--temperature: expected a number above 0"),
        "temperature-negative": (["--temperature", "-1"], "ask for it with --greedy"),
        "temperature-not-a-number": (["--temperature", "warm"], "got 'warm'; τ -> 0 is the greedy choice"),
        "temperature-nan": (["--temperature", "nan"], "--temperature: expected a number above 0"),
        "top-k-zero": (["--top-k", "0"], "--top-k: expected a whole number from 1 to d_vocab = 63"),
        "top-k-past-vocabulary": (["--top-k", "64"], "--top-k: expected a whole number from 1 to d_vocab = 63"),
        "prompt-outside": (["--prompt", "Xerxes @ home"],
                           "the characters 'X', '@' are not in the model's vocabulary"),
        "prompt-empty": (["--prompt", ""], "--prompt: the prompt is empty; expected at least one character"),
        "greedy-with-temperature": (["--greedy", "--temperature", "2"],
                                    "--greedy and --temperature: choose one; --greedy takes the largest logit"),
        "greedy-with-top-k": (["--greedy", "--top-k", "5"], "--greedy and --top-k: choose one"),
        "length-past-maximum": (["--length", "401"], "--length: expected a whole number from 0 to 400"),
        "no-model": (["--load", folder.path("missing.safetensors")], "--load: cannot read the file"),
        "truncated-model": (["--load", cut], "bytes of data after the header"),
        "corrupt-model": (["--load", bad], "the header is not valid JSON"),
        "speed-unwritable": (["--length", "5", "--speed", os.path.join(folder.root, "no", "speed.txt")],
                             "--speed: cannot write the file"),
    }


def names_cases(folder, program, model):
    """ch16-names's --load, on the model chapter 15 saved (its copying model beside it, FILE.copying):
    (arguments, fragment) by case. Chapter 14's model has one layer, so it holds no induction head."""
    del program
    cut = (lambda saved: folder.path("cut.safetensors", saved[:-100]))
    bad = (lambda saved: folder.path("bad.safetensors", saved[:8] + b"!" + saved[9:]))
    one_layer = os.path.join(os.path.dirname(os.path.dirname(model or "")), "ch14", "model.safetensors")
    return {
        "no-model": (["--load", folder.path("missing.safetensors")], "--load: cannot read the file"),
        "truncated-model": (["--load", cut], "bytes of data after the header"),
        "corrupt-model": (["--load", bad], "the header is not valid JSON"),
        "one-layer-model": (["--load", one_layer], "expected a model of at least 2 attention layers (chapter 15's)"),
    }


CASES = {"11": ch11_cases, "14": ch14_cases, "15": ch15_cases, "16": ch16_cases, "16-names": names_cases}
TIMEOUTS = {"11": 60}  # seconds per run; 120 unless named


def saved_model(chapter, program, model, case, folder):
    """The bytes of the model a case damages: the one chapter 14 saved, or one trained here."""
    if chapter == "14":
        if case not in CH14_NEEDS_A_MODEL:
            return b""
        subprocess.run([program, "--text", folder.path("own.txt"), "--steps", "1",
                        "--save", folder.path("own.safetensors", b"")],
                       capture_output=True, check=True, timeout=120)
        return open(folder.path("own.safetensors"), "rb").read()
    if chapter in ("16", "16-names"):
        return open(model, "rb").read()
    return b""


def run_case(chapter, program, model, case):
    """The verdict on one case: 0 when the program refuses (or notes) as it should."""
    folder = Folder()
    arguments, fragment, *status = CASES[chapter](folder, program, model)[case]
    saved = saved_model(chapter, program, model, case, folder)
    arguments = [argument(saved) if callable(argument) else argument for argument in arguments]
    return verdict(program, arguments, fragment, status=status[0] if status else 2,
                   timeout=TIMEOUTS.get(chapter, 120))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapter", required=True, choices=sorted(CASES), help="the chapter whose options to check")
    parser.add_argument("--list", action="store_true", help="print the names of the cases, ';'-separated")
    parser.add_argument("--program", help="the chapter program")
    parser.add_argument("--case", help="the case to run")
    parser.add_argument("--model", help="chapter 16: the model chapter 14 saved; chapter 15 and 16-names: "
                        "chapter 15's (16-names finds chapter 14's in the build folder beside it)")
    args = parser.parse_args()
    if args.list:
        print(";".join(CASES[args.chapter](Folder(write=False), None, None)), end="")
        return 0
    if not args.program or not args.case:
        parser.error("give --program and --case, or --list")
    return run_case(args.chapter, args.program, args.model, args.case)


if __name__ == "__main__":
    sys.exit(main())
