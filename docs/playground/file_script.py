#!/usr/bin/env python3
"""Writes a file the book build made (the King James text, a saved model) as a script for the
"Try it here" panels: a page opened from file:// may not fetch a file, but it may load a
script. The script adds the file's bytes to self.BookPlaygroundFiles under the path where
the chapter program, compiled to WebAssembly, reads it (docs/playground/playground.cmake);
playground.js writes them there before the program runs.

    file_script.py --input build/text/kjv-held-out.txt --path /build/text/kjv-held-out.txt --output kjv-held-out.js
"""
import argparse
import base64
import json
import os
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", required=True, help="the file the build made")
    parser.add_argument("--path", required=True, help="where the program reads it, in its in-memory file system")
    parser.add_argument("--output", required=True, help="the script to write")
    args = parser.parse_args()
    try:
        with open(args.input, "rb") as file:
            data = file.read()
    except OSError as error:
        print(f"file_script.py: cannot read {args.input}: {error.strerror}", file=sys.stderr)
        return 2
    # Plain ASCII text stays text (smaller, and readable); anything else goes as base64.
    if all(b in (9, 10, 13) or 32 <= b < 127 for b in data):
        entry = {"text": data.decode("ascii")}
    else:
        entry = {"base64": base64.b64encode(data).decode("ascii")}
    with open(args.output, "w", encoding="ascii") as out:
        out.write(f"// {os.path.basename(args.input)} ({len(data)} bytes) for the \"Try it here\" panels, made by the "
                  "book build (docs/playground/file_script.py).\n")
        out.write("(self.BookPlaygroundFiles = self.BookPlaygroundFiles || {})" f"[{json.dumps(args.path)}] = ")
        out.write(json.dumps(entry))
        out.write(";\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
