#!/usr/bin/env bash
# Two processes compiling the same kernel into one empty TK_CACHE_DIR at
# once: both succeed, one whole entry is left (no temporary), and a third
# process loads it without finding it corrupt. Three rounds.
#
#   two-processes-one-cache.sh HELLO SCRATCH_DIR
set -euo pipefail
hello=$1 scratch=$2
# TK_TEST_BACKEND: another backend (the GPU scripts run it on cuda).
export TK_BACKEND=${TK_TEST_BACKEND:-cpu} TK_LOG_LEVEL=warn TK_CACHE_DIR=$scratch/cache
for round in 1 2 3; do
  rm -rf "$scratch" && mkdir -p "$scratch"
  "$hello" > "$scratch/a.log" 2>&1 & a=$!
  "$hello" > "$scratch/b.log" 2>&1 & b=$!
  wait "$a" || { echo "round $round: first process failed:"; cat "$scratch/a.log"; exit 1; }
  wait "$b" || { echo "round $round: second process failed:"; cat "$scratch/b.log"; exit 1; }
  grep -q "is correct" "$scratch/a.log" "$scratch/b.log"
  entries=$(find "$TK_CACHE_DIR" -type f | wc -l)
  temporaries=$(find "$TK_CACHE_DIR" -name '*.tmp*' | wc -l)
  if [ "$entries" -ne 1 ] || [ "$temporaries" -ne 0 ]; then
    echo "round $round: the cache holds $entries files ($temporaries temporaries):"
    find "$TK_CACHE_DIR" -type f
    exit 1
  fi
  "$hello" > "$scratch/c.log" 2>&1 || { cat "$scratch/c.log"; exit 1; }
  if grep -Eiq "corrupt|does not load|recompil" "$scratch/c.log"; then
    echo "round $round: the entry two processes wrote is not whole:"
    cat "$scratch/c.log"
    exit 1
  fi
done
echo "two processes, one cache: 3 rounds, one whole entry each"
