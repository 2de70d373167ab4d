#!/usr/bin/env python3
"""Validates instances against JSON schemas with python3-jsonschema (Draft 2020-12).

Input: a JSON file holding [{"schema": S, "instance": I, "label": L}, ...].
Prints one line per invalid instance and exits 1 when any is invalid, 0 otherwise.
"""
import json
import sys

import jsonschema


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    bad = 0
    for case in cases:
        validator = jsonschema.Draft202012Validator(case["schema"])
        errors = list(validator.iter_errors(case["instance"]))
        if errors:
            bad += 1
            print(f"{case.get('label', '?')}: {errors[0].message}")
    print(f"validated {len(cases)} instances, {bad} invalid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
