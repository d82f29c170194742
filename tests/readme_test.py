#!/usr/bin/env python3
"""Runs every command block of README.md and docs/*.md and checks the figures
they quote, and that their relative links lead to files and headings that
exist.

Conventions (README.md and docs/*.md follow them; CONTRIBUTING.md repeats them):

- A ```sh or ```bash block is a list of commands. Each block runs in a fresh
  temporary directory holding `build/stg` (the binary under test), the
  Python module `build/stg.*.so` (with --python_module), `tests/` (the
  repository's test data) and `examples/`, one `bash -o pipefail -c` per
  command line (lines ending in a backslash continue); every command must
  exit with status 0. The binary is ./build/stg, as after the README's
  set-up: it is not on PATH, so a bare `stg` fails as it would for a user.
- A ```console block holds commands after "$ " and, below each, lines of its
  output (stdout and stderr together). A command whose shown output has
  "error:" in it must fail (exit status not 0); the others must succeed.
- A plain ``` block right after the marker `<!-- readme-test: output -->` is
  output of the last ```sh/```bash block above it.
- Output lines must appear in the real output in the same order (other lines
  may come between). Seconds ("0.025 s") are the only figures not compared.
- Markers, an HTML comment on the line before a block (invisible on GitHub):
    <!-- readme-test: skip REASON -->       the block is not run (it installs
                                            packages, needs a Slurm cluster or
                                            a checkout of the reference, ...)
    <!-- readme-test: release-only REASON --> not run under the sanitizers
                                            (--sanitized: a block that takes
                                            seconds in a Release build and
                                            minutes unoptimized)
    <!-- readme-test: stg-only REASON -->   only the `./build/stg ...` parts of
                                            the block's `&&` chains run (set-up,
                                            build and tests are what CI ran
                                            before this test)
    <!-- readme-test: append FLAGS -->      FLAGS are appended to every stg
                                            generate command of the block: the
                                            small-size override, which the
                                            README's text must mention
    <!-- readme-test: output -->            see above

- A relative link, [text](path) or [text](path#anchor) or [text](#anchor),
  must name a file of the repository and, for a .md file with an anchor, one
  of its headings (GitHub's anchors: lower case, punctuation other than "-"
  and "_" dropped, spaces as "-").

usage: readme_test.py --readme README.md docs/*.md --stg build/stg --repo .
                      [--python_module build/stg.cpython-311-x86_64-linux-gnu.so]
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARKER = re.compile(r"^<!-- readme-test: (skip|release-only|stg-only|append|output)\b\s*(.*?)\s*-->\s*$")
SECONDS = re.compile(r"\b\d+\.\d+ s\b")
STG = re.compile(r"(^|\s)(\./build/stg|stg)(\s|$)")
SUBCOMMANDS = ("models", "validate", "inspect", "dot", "plans")


LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading):
    """GitHub's anchor of a heading."""
    text = heading.strip().lower()
    return re.sub(r"[^a-z0-9 _-]", "", text).replace(" ", "-")


def anchors(markdown):
    out, fence = set(), False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            out.add(slug(line.lstrip("#")))
    return out


def link_errors(path, text, repo):
    """Relative links of `text` (the file at `path`) that lead nowhere."""
    errors, fence = [], False
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue  # https:, mailto:
            file, _, anchor = target.partition("#")
            where = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(where):
                errors.append("%s:%d: link to %s: no such file" % (path, number, target))
                continue
            if anchor and where.endswith(".md"):
                with open(where) as f:
                    if anchor not in anchors(f.read()):
                        errors.append("%s:%d: link to %s: no such heading" % (path, number, target))
    return errors


class Block:
    def __init__(self, line, lang, text, marker, path="README.md"):
        self.path = path  # the Markdown file
        self.line = line  # 1-based line of the opening fence
        self.lang = lang
        self.text = text
        self.marker = marker  # (kind, argument) or None


def parse_blocks(readme, path="README.md"):
    blocks, marker, fence = [], None, None
    lines = readme.split("\n")
    for number, line in enumerate(lines, 1):
        if fence is not None:
            if line.strip() == "```":
                blocks.append(Block(fence[0], fence[1], "\n".join(fence[2]), fence[3], path))
                fence = None
            else:
                fence[2].append(line)
            continue
        m = MARKER.match(line)
        if m:
            marker = (m.group(1), m.group(2))
            continue
        if line.startswith("```"):
            fence = (number, line[3:].strip(), [], marker)
            marker = None
        elif line.strip():
            marker = None  # a marker applies to the block right below it
    return blocks


def command_lines(text):
    """Lines of a shell block, continuations joined, comments dropped."""
    out, pending = [], ""
    for line in text.split("\n"):
        if pending:
            line = pending + " " + line.strip()
            pending = ""
        if line.rstrip().endswith("\\"):
            pending = line.rstrip()[:-1].rstrip()
            continue
        if line.strip() and not line.strip().startswith("#"):
            out.append(line.strip())
    return out


def is_generate(command):
    m = STG.search(command)
    if not m:
        return False
    rest = command[m.end():].split()
    return not (rest and rest[0] in SUBCOMMANDS)


def with_flags(command, flags):
    """`command` with `flags` appended to its stg call (before a pipe)."""
    if not flags or not is_generate(command):
        return command
    head, bar, tail = command.partition(" | ")
    return head + " " + flags + (bar + tail if bar else "")


def run(command, cwd, env):
    p = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=cwd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    return p.returncode, p.stdout


PYTHON_MODULE = None  # --python_module


def sandbox(stg, repo):
    d = tempfile.mkdtemp(prefix="stg_readme_")
    os.makedirs(os.path.join(d, "build"))
    os.symlink(os.path.abspath(stg), os.path.join(d, "build", "stg"))
    if PYTHON_MODULE:
        os.symlink(os.path.abspath(PYTHON_MODULE),
                   os.path.join(d, "build", os.path.basename(PYTHON_MODULE)))
    for part in ("tests", "examples"):
        os.symlink(os.path.join(os.path.abspath(repo), part), os.path.join(d, part))
    # As a user pastes the commands after the README's set-up: the binary is
    # ./build/stg, not on PATH (a bare `stg` is "command not found").
    env = dict(os.environ)
    # No OMPI_ALLOW_RUN_AS_ROOT here: the README's mpirun line must work as
    # written for root, the user it assumes.
    for name in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
        env.pop(name, None)
    return d, env


def missing_lines(expected, output):
    """The first expected line not found in order in `output`, or None."""
    got = [SECONDS.sub("<s> s", l.rstrip()) for l in output.split("\n")]
    at = 0
    for want in expected:
        want = SECONDS.sub("<s> s", want.rstrip())
        while at < len(got) and got[at] != want:
            at += 1
        if at == len(got):
            return want
        at += 1
    return None


def run_shell_block(block, stg, repo):
    """Runs a sh/bash block; returns (errors, output, commands run)."""
    kind, arg = block.marker or (None, "")
    commands = command_lines(block.text)
    if kind == "stg-only":
        commands = [part.strip() for c in commands for part in c.split("&&")
                    if part.strip().startswith("./build/stg")]
    if kind == "append":
        commands = [with_flags(c, arg) for c in commands]
    d, env = sandbox(stg, repo)
    errors, output = [], ""
    try:
        for c in commands:
            status, out = run(c, d, env)
            output += out
            if status != 0:
                errors.append("%s:%d: `%s` exited with %d:\n%s" % (block.path, block.line, c, status, out))
                break
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return errors, output, len(commands)


def run_console_block(block, stg, repo):
    steps = []  # (command, expected lines)
    for line in block.text.split("\n"):
        if line.startswith("$ "):
            steps.append((line[2:].strip(), []))
        elif steps and line.strip():
            steps[-1][1].append(line)
    d, env = sandbox(stg, repo)
    errors = []
    try:
        for command, expected in steps:
            status, out = run(command, d, env)
            should_fail = any("error:" in l for l in expected)
            if (status != 0) != should_fail:
                errors.append("%s:%d: `%s` exited with %d:\n%s" %
                              (block.path, block.line, command, status, out))
                continue
            lost = missing_lines(expected, out)
            if lost is not None:
                errors.append("%s:%d: `%s` did not print\n  %s\nit printed:\n%s" %
                              (block.path, block.line, command, lost, out))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return errors, len(steps), sum(len(e) for _, e in steps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--readme", required=True, nargs="+", help="README.md and docs/*.md")
    ap.add_argument("--stg", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--python_module", help="the built Python module, put beside build/stg")
    ap.add_argument("--sanitized", action="store_true",
                    help="stg is a sanitizer build: skip the release-only blocks")
    a = ap.parse_args()
    global PYTHON_MODULE
    PYTHON_MODULE = a.python_module
    blocks, errors = [], []
    for path in a.readme:
        with open(path) as f:
            text = f.read()
        blocks += parse_blocks(text, os.path.relpath(path, a.repo))
        errors += link_errors(path, text, a.repo)

    # Without the module (a build without it, e.g. under the sanitizers) the
    # blocks that import it are skipped, and so are their output blocks.
    def runnable(b):
        kind = (b.marker or ("",))[0]
        if kind == "skip" or (kind == "release-only" and a.sanitized):
            return False
        return PYTHON_MODULE is not None or "PYTHONPATH=build" not in b.text
    shell = [b for b in blocks if b.lang in ("sh", "bash") and runnable(b)]
    console = [b for b in blocks if b.lang == "console"]
    skipped = [b for b in blocks if b.lang in ("sh", "bash", "console") and b not in shell + console]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        shell_results = dict(zip(shell, pool.map(lambda b: run_shell_block(b, a.stg, a.repo), shell)))
        console_results = list(pool.map(lambda b: run_console_block(b, a.stg, a.repo), console))

    commands, checked = 0, 0
    if not shell and not console:
        errors.append("%s: no command blocks found" % ", ".join(a.readme))
    for b in shell:
        errors += shell_results[b][0]
        commands += shell_results[b][2]
    for e, n, lines in console_results:
        errors += e
        commands += n
        checked += lines
    # Output blocks: against the last shell block above them, in the same file.
    last = None
    for b in blocks:
        if last is not None and last.path != b.path:
            last = None
        if b in shell_results:
            last = b
        elif b.lang in ("sh", "bash"):
            last = b  # skipped: its output blocks are not checked
        elif b.marker and b.marker[0] == "output":
            if last is not None and last not in shell_results:
                continue
            expected = [l for l in b.text.split("\n") if l.strip()]
            checked += len(expected)
            if last is None:
                errors.append("%s:%d: output block without a command block above it" % (b.path, b.line))
                continue
            lost = missing_lines(expected, shell_results[last][1])
            if lost is not None:
                errors.append("%s:%d: the block at line %d did not print\n  %s\nit printed:\n%s" %
                              (b.path, b.line, last.line, lost, shell_results[last][1]))
    for e in errors:
        print(e, file=sys.stderr)
    print("readme: %d files, %d blocks, %d commands run, %d output lines checked, "
          "%d blocks skipped (%s); %s" %
          (len(a.readme), len(shell) + len(console), commands, checked, len(skipped),
           ", ".join("%s:%d" % (b.path, b.line) for b in skipped) or "none",
           "%d failures" % len(errors) if errors else "all passed"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
