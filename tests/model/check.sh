#!/usr/bin/env bash
# Model-checks one protocol with spin: the model must verify with no error,
# with each variant it offers, and each of its -DBROKEN... variants must fail
# (a model that cannot fail proves nothing). Usage: check.sh MODEL   (MODEL.pml in this folder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
model=$1
command -v spin >/dev/null || { echo "check.sh: spin is not installed (Debian package spin)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/$model.pml" "$work/"
cd "$work"

# pan.c at -O1 by default: it searches as fast as at -O2 (the injection
# model's 24.8 million states in 23.2 s against 23.7 s) and compiles in
# 0.8 s against 1.4 s, paid once per configuration of every model.
verify() {  # $1: extra spin flags, $2: cc's optimisation; prints pan's summary, returns its error count
  rm -f pan pan.c  # a model spin cannot read must not be judged by the last one's pan
  # spin reports some errors (an array passed without its index) and still
  # writes a pan.c: its exit status, not the file, says whether it read the model.
  if ! spin -a $1 "$model.pml" > spin.out 2>&1 || [ ! -f pan.c ]; then
    echo "check.sh: spin cannot read $model.pml with flags '$1':" >&2
    cat spin.out >&2
    return 1
  fi
  cc "${2:--O1}" -DSAFETY -DCOLLAPSE -o pan pan.c
  ./pan -m200000 > pan.out
  grep -E "errors:|states, stored|transitions|elapsed" pan.out | sed 's/^/  /'
  sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out
}

# Verifies with flags $1 (described as $2); fails the check, with the
# counterexample, on any error.
must_verify() {
  echo "$model: verifying $2"
  out=$(verify "$1")
  echo "$out" | head -n -1
  errors=$(echo "$out" | tail -n 1)
  if [ "$errors" != "0" ]; then
    echo "FAIL: $model ($2) has $errors error(s); counterexample:"
    spin -t -p $1 "$model.pml" | tail -n 40
    exit 1
  fi
}

must_verify "" "the protocol"

# Variants a model offers (named in it) must verify too: SPURIOUS (the futex
# may wake for no reason), RESET (a reset() races the rest), and both.
variants=()
grep -q SPURIOUS "$model.pml" && variants+=("-DSPURIOUS")
grep -q RESET "$model.pml" && variants+=("-DRESET")
[ ${#variants[@]} -eq 2 ] && variants+=("-DRESET -DSPURIOUS")
for flags in "${variants[@]}"; do
  must_verify "$flags" "with $flags"
done

# Configurations a model asks for in a "verify also: FLAGS" line of its
# header (a part of the protocol checked at a size of its own).
while IFS= read -r flags; do
  must_verify "$flags" "with $flags"
done < <(sed -n 's/^ \* verify also: //p' "$model.pml")

# Every broken variant the model names (-DBROKEN, -DBROKEN_<what>) must fail.
variants=$(grep -oE '^#if(n?def)? +BROKEN[A-Z_]*' "$model.pml" | awk '{print $2}' | sort -u)
if [ -z "$variants" ]; then
  echo "FAIL: $model names no BROKEN variant: a model that cannot fail proves nothing"
  exit 1
fi
for v in $variants; do
  echo "$model: the broken variant $v must fail"
  # -O0: a broken variant's search ends at its first error, in a fraction
  # of a second, and -O1 would cost it most of a second of compiling.
  out=$(verify "-D$v" -O0)
  echo "$out" | head -n -1
  errors=$(echo "$out" | tail -n 1)
  if [ "$errors" = "0" ]; then
    echo "FAIL: spin found no error in the broken variant $v of $model: the model cannot tell right from wrong"
    exit 1
  fi
  echo "  counterexample found, as it must be (last steps):"
  spin -t -p "-D$v" "$model.pml" 2>/dev/null | grep -E '^ *[0-9]+:' | tail -n 8 | sed 's/^/    /'
done
echo "$model: 1 passed, 0 failed"
