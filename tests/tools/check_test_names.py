#!/usr/bin/env python3
"""No Catch2 test name holds a ';'.

Usage: check_test_names.py TEST_BINARY...

catch_discover_tests reads each binary's list of test names into a CMake list, which ';'
separates: a name holding one became two CTest entries that matched no test, so the test never
ran under ctest (nor under the sanitizer run of CI). Exits 1 with one line per such name.
"""
import subprocess
import sys


def main() -> int:
    bad = []
    for binary in sys.argv[1:]:
        listed = subprocess.run([binary, "--list-test-names-only"], capture_output=True, text=True, check=False)
        for name in listed.stdout.splitlines():
            if ";" in name:
                bad.append(f"{binary}: test name holds ';' (ctest would never run it): {name.strip()}")
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
