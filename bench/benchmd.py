"""bench/benchmd.py: docs/bench.md's sections, each written by its own
bench script (bench/run.py runs them all for `make bench`). A section is
a "## " heading and what follows it up to the next "## " heading; a
script rewrites its own where it stands and leaves every other one as it
was, so that one script run alone (or one `make bench` part that failed)
never loses another's figures. Python 3 standard library."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_MD = os.path.join(ROOT, "docs", "bench.md")


def write_section(lines, path=BENCH_MD):
    """lines: the section, its "## " heading first. Replaces that
    section in path where it stands, or adds it at the end."""
    heading = lines[0]
    if not heading.startswith("## "):
        raise ValueError("a section starts with its '## ' heading, not %r" % heading)
    section = "\n".join(lines).rstrip("\n") + "\n"
    text = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    at = text.find("\n" + heading + "\n")
    if at >= 0:
        end = text.find("\n## ", at + 1)
        rest = text[end + 1:] if end >= 0 else ""
        text = text[:at + 1] + section + ("\n" + rest if rest else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(path, "w") as f:
        f.write(text)
