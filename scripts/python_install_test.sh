#!/usr/bin/env bash
# `pip install .` into fresh virtual environments, as docs/python.md says a
# user does: one of Debian's python3 and one of another CPython (pyenv's,
# conda's; the first python3 on PATH that is not Debian's, or PYTHON=path).
# Each venv must import the module and run a plan. Run after scripts/build.sh
# (a checkout built for the same Python version installs in seconds).
#   usage: bash scripts/python_install_test.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

pythons=(/usr/bin/python3)
other=""
# pyenv's 3.11 first: the ABI of Debian 12's python3, so that the module
# already built in build/ serves both and CI builds nothing twice.
pyenv_root=${PYENV_ROOT:-${HOME:-/root}/.pyenv}
for candidate in $(type -ap python3) "$pyenv_root"/versions/3.11*/bin/python3 \
  "$pyenv_root"/versions/3.1[0-9]*/bin/python3; do
  [[ -x "$candidate" ]] || continue
  real=$(readlink -f "$candidate")
  [[ "$real" == /usr/bin/* || "$real" == /bin/* ]] && continue
  # A pyenv shim: the interpreter it runs.
  real=$("$candidate" -c 'import sys; print(sys.executable)' 2>/dev/null) || continue
  [[ "$real" == /usr/bin/* || "$real" == /bin/* ]] && continue
  other=$real
  break
done
if [[ -n "$other" ]]; then
  pythons+=("$other")
else
  echo "python_install_test: no CPython other than Debian's on this machine; testing Debian's only"
fi

passed=0
for py in "${pythons[@]}"; do
  venv="$work/venv$passed"
  "$py" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check . >"$work/pip.log" 2>&1 ||
    { cat "$work/pip.log"; echo "python_install_test: pip install . failed with $py" >&2; exit 1; }
  "$venv/bin/python" - <<'PY'
import stg, sys
r = stg.plan(model="llama3-8b", dp=2, tp=2, pp=2)
assert r["ranks"] == 8, r["ranks"]
print("python_install_test: %s %s: stg %s, a plan of %d ranks" % (
    sys.implementation.name, sys.version.split()[0], stg.__version__, r["ranks"]))
PY
  passed=$((passed + 1))
done
echo "python_install_test: $passed passed, 0 failed"
