#!/usr/bin/env python3
"""scripts/check_layers.py on small made-up trees: an include of a linked library or of what
it passes on is accepted; an upward include, a sibling's header and a private dependency's
header are refused with the file and the header named."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "check_layers.py")


def make_tree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, "src", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def library(root, name, folder, sources, link=(), interface=()):
    return {"name": name, "dir": os.path.join(root, "src", folder), "sources": list(sources),
            "link": list(link), "interface": list(interface)}


class CheckLayers(unittest.TestCase):
    def run_check(self, files, libraries):
        with tempfile.TemporaryDirectory() as root:
            make_tree(root, files)
            layer_map = os.path.join(root, "layers.json")
            with open(layer_map, "w", encoding="utf-8") as f:
                json.dump([library(root, *lib[:3], **lib[3]) for lib in libraries], f)
            return subprocess.run([sys.executable, SCRIPT, layer_map, root],
                                  capture_output=True, text=True, check=False)

    def assert_refused(self, files, libraries, message):
        result = self.run_check(files, libraries)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn(message, result.stdout)

    # low <- mid <- top, and a sibling of mid that nothing links.
    FILES = {
        "low/low.h": "int low();\n",
        "low/low.cpp": '#include "low/low.h"\nint low() { return 1; }\n',
        "low/only_header.h": "struct Plain {};\n",
        "mid/mid.h": '#include "low/low.h"\n',
        "mid/mid.cpp": '#include "mid/mid.h"\n#include "low/only_header.h"\n',
        "side/side.h": "int side();\n",
        "side/side.cpp": '#include "side.h"\n',
        "top/top.cpp": '#include "mid/mid.h"\n#include "low/low.h"\n',
    }
    LIBS = [
        ("hearth_low", "low", ["low.cpp"], {}),
        ("hearth_mid", "mid", ["mid.cpp"], {"link": ["hearth_low"], "interface": ["hearth_low"]}),
        ("hearth_side", "side", ["side.cpp"], {}),
        ("hearth_top", "top", ["top.cpp"], {"link": ["hearth_mid"], "interface": ["hearth_mid"]}),
    ]

    def test_downward_includes_pass(self):
        result = self.run_check(self.FILES, self.LIBS)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_an_upward_include_fails_naming_the_file_and_the_header(self):
        files = dict(self.FILES)
        files["low/low.cpp"] += '#include "top/top.h"\n'
        files["top/top.h"] = "int top();\n"
        self.assert_refused(files, self.LIBS,
                            'src/low/low.cpp (hearth_low) includes "top/top.h" of hearth_top')

    def test_a_header_only_file_is_checked_too(self):
        files = dict(self.FILES)
        files["low/only_header.h"] = '#include "mid/mid.h"\n'
        self.assert_refused(files, self.LIBS,
                            'src/low/only_header.h (hearth_low) includes "mid/mid.h" of hearth_mid')

    def test_a_sibling_that_is_not_linked_fails(self):
        files = dict(self.FILES)
        files["mid/mid.cpp"] += '#include "side/side.h"\n'
        self.assert_refused(files, self.LIBS, "of hearth_side, which hearth_mid does not depend on")

    def test_a_private_dependency_is_not_passed_on(self):
        libs = [lib if lib[0] != "hearth_mid" else
                ("hearth_mid", "mid", ["mid.cpp"], {"link": ["hearth_low"]})
                for lib in self.LIBS]
        self.assert_refused(self.FILES, libs,
                            'src/top/top.cpp (hearth_top) includes "low/low.h" of hearth_low')


if __name__ == "__main__":
    unittest.main()
