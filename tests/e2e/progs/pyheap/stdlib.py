# leakhound - SPDX-License-Identifier: MIT
"""A real workload of the standard library, in the same process as the snapshot: the
unittest runner on test.test_json (when this Python has its test package), a DOM of
xml.dom.minidom, email messages parsed by the email package, a json document and the
http.server machinery, all kept alive, so that the heap at the snapshot is one that
code no one here wrote has built (its classes, closures, caches and type objects)."""
import email
import email.policy
import http.server
import io
import json
import unittest
import xml.dom.minidom

kept = []


def run_unittest():
    """The stdlib's own json tests (not test_tool: it starts subprocesses)."""
    names = ["test.test_json." + n for n in ("test_decode", "test_default", "test_dump",
                                            "test_fail", "test_float", "test_indent",
                                            "test_pass1", "test_recursion", "test_scanstring",
                                            "test_separators", "test_speedups",
                                            "test_unicode")]
    try:
        suite = unittest.defaultTestLoader.loadTestsFromNames(names)
    except ImportError:
        return None
    stream = io.StringIO()
    result = unittest.TextTestRunner(stream=stream, verbosity=0).run(suite)
    kept.append((suite, result, stream))
    return result


def main(snapshot, say):
    result = run_unittest()
    doc = "<catalog>%s</catalog>" % "".join(
        '<item id="%d" kind="k%d"><name>item %d</name><price>%d.50</price></item>'
        % (i, i % 7, i, i) for i in range(1500))
    kept.append(xml.dom.minidom.parseString(doc))
    kept.append([email.message_from_string(
        "From: a%d@example.org\nTo: b@example.org\nSubject: note %d\n"
        "Content-Type: text/plain; charset=utf-8\n\nbody %d\n" % (i, i, i),
        policy=email.policy.default) for i in range(150)])
    kept.append(json.loads(json.dumps([{"id": i, "tags": ["t%d" % (i % 10), "x"],
                                        "pos": [i, i * 2.5]} for i in range(3000)])))
    kept.append(http.server.SimpleHTTPRequestHandler)
    snapshot("after", closure=True)
    if result is None:
        say("unittest", "absent")
    else:
        say("unittest", "%d/%d" % (result.testsRun - len(result.failures) -
                                   len(result.errors), result.testsRun))
