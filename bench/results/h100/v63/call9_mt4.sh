#!/usr/bin/env bash
# v63 call 9: call 8's script on mt4 = mt3 with its consumer's block index fixed (mt3 read
# tiles past the first at their slice's end: wrong results, caught by the integer cases) and
# the planner's tiles per warp for the down GEMV only (gate-up keeps one).
#   carry: ["build/carry/dag2.tgz", "build/carry/mt4.tgz"]
export B=mt4 W=w9
bash bench/results/h100/v63/call8_mt3.sh
