#!/usr/bin/env bash
# Run the runtime tests against another torch version, in a throwaway virtualenv.
#
#   benchmarks/torch_matrix.sh 2.4.1                 # tests/runtime, not slow
#   benchmarks/torch_matrix.sh 2.15.0 -k paired      # extra arguments go to pytest
#
# The working tree (tracked and untracked files, not build outputs) is copied to a
# temporary directory, installed there with torch==VERSION from the package index,
# and tests/runtime is run with `-m 'not slow'`. The virtualenv and the copy are
# deleted on exit. PIP_CONFIG_FILE=/dev/null ignores machine-wide pip settings
# (e.g. a constraints file that caps torch), so any version the index serves
# installs; pass PIP_INDEX_URL etc. in the environment as usual.
# The last line printed is `torch VERSION: PASSED|FAILED (pytest exit status N)`.
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: $0 TORCH_VERSION [pytest arguments]" >&2
    exit 2
fi
version=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/hooklint-torch-$version.XXXXXX")
trap 'rm -rf "$work"' EXIT

export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1
"$python" -m venv "$work/venv"
pip="$work/venv/bin/python -m pip"

mkdir "$work/src"
(cd "$root" && git ls-files --cached --others --exclude-standard -z |
    xargs -0 tar -cf - --ignore-failed-read 2>/dev/null) | tar -xf - -C "$work/src"

echo "installing torch==$version into $work/venv" >&2
$pip install -q "torch==$version" >&2
$pip install -q -e "$work/src[runtime,test]" >&2
"$work/venv/bin/python" -c 'import torch, sys; print("torch", torch.__version__, "python", sys.version.split()[0])'

status=0
(cd "$work/src" && "$work/venv/bin/python" -m pytest tests/runtime -q -p no:cacheprovider \
    -m 'not slow' "$@") || status=$?
if [ "$status" -eq 0 ]; then
    echo "torch $version: PASSED (pytest exit status 0)"
else
    echo "torch $version: FAILED (pytest exit status $status)"
fi
exit "$status"
