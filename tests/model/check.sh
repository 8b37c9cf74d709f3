#!/usr/bin/env bash
# Model-checks one protocol with spin: the model must verify with no error,
# and each of its -DBROKEN... variants must fail (a model that cannot fail proves
# nothing). Usage: check.sh MODEL   (MODEL.pml in this folder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
model=$1
command -v spin >/dev/null || { echo "check.sh: spin is not installed (Debian package spin)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/$model.pml" "$work/"
cd "$work"

verify() {  # $1: extra spin flags; prints pan's summary, returns its error count
  spin -a $1 "$model.pml" >/dev/null
  cc -O2 -DSAFETY -DCOLLAPSE -o pan pan.c
  ./pan -m200000 > pan.out
  grep -E "errors:|states, stored|transitions|elapsed" pan.out | sed 's/^/  /'
  sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out
}

echo "$model: verifying the protocol"
out=$(verify "")
echo "$out" | head -n -1
errors=$(echo "$out" | tail -n 1)
if [ "$errors" != "0" ]; then
  echo "FAIL: $model has $errors error(s); counterexample:"
  spin -t -p "$model.pml" | tail -n 40
  exit 1
fi

if grep -q SPURIOUS "$model.pml"; then
  echo "$model: verifying with spurious futex wake-ups"
  out=$(verify "-DSPURIOUS")
  echo "$out" | head -n -1
  errors=$(echo "$out" | tail -n 1)
  if [ "$errors" != "0" ]; then
    echo "FAIL: $model with spurious wake-ups has $errors error(s); counterexample:"
    spin -t -p -DSPURIOUS "$model.pml" | tail -n 40
    exit 1
  fi
fi

# Every broken variant the model names (-DBROKEN, -DBROKEN_<what>) must fail.
variants=$(grep -oE '^#if(n?def)? +BROKEN[A-Z_]*' "$model.pml" | awk '{print $2}' | sort -u)
for v in $variants; do
  echo "$model: the broken variant $v must fail"
  out=$(verify "-D$v")
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
