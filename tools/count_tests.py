#!/usr/bin/env python3
"""tools/count_tests.py: counts test cases in the JUnit XML files Bazel leaves under
bazel-testlogs and prints "N passed, M failed[, K skipped]". A test binary that crashed or
timed out before writing its own XML counts as one failure. Exit status 1 if any failed."""
import pathlib
import sys
import xml.etree.ElementTree as ElementTree

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "bazel-testlogs")
passed = failed = skipped = 0
failures = []
for xml_file in sorted(root.rglob("test.xml")):
    try:
        tree = ElementTree.parse(xml_file)
    except ElementTree.ParseError:
        failed += 1
        failures.append(str(xml_file.parent))
        continue
    for case in tree.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
            failures.append(f"{xml_file.parent.relative_to(root)}: {case.get('classname')}.{case.get('name')}")
        elif case.get("result") == "skipped" or case.find("skipped") is not None or case.get("status") == "notrun":
            skipped += 1
        else:
            passed += 1
for failure in failures:
    print(f"FAILED: {failure}")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
